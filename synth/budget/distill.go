package budget

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/output"
)

// traceJSON is a trace as a line of TRACES.jsonl: the fields in order, the
// messages already encoded.
type traceJSON struct {
	CustomID    string          `json:"custom_id"`
	Messages    json.RawMessage `json:"messages"`
	GroundTruth string          `json:"ground_truth"`
	TimeLimitS  *float64        `json:"time_limit_s"`
	ElapsedS    float64         `json:"elapsed_s"`
}

// MarshalJSON encodes the trace as a line of the JSONL that ParseTrace
// reads, without the newline: custom_id, messages, ground_truth,
// time_limit_s (null without a limit) and elapsed_s, in that order; Line is
// left out. The messages are encoded as encoding/json's Marshal encodes
// them, "<", ">" and "&" escaped as \u003c, \u003e and \u0026; the other
// strings are written as they are.
func (t Trace) MarshalJSON() ([]byte, error) {
	msgs, err := json.Marshal(t.Messages)
	if err != nil {
		return nil, fmt.Errorf("budget: trace %s: messages: %w", t.CustomID, err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(traceJSON{t.CustomID, msgs, t.GroundTruth, t.TimeLimitS, t.ElapsedS}); err != nil {
		return nil, fmt.Errorf("budget: trace %s: %w", t.CustomID, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Conversation is one conversation of a teacher with a row of Write's
// rows, as a live run (get_duration answered from a timer) ended it: what
// Distill makes a trace of.
type Conversation struct {
	// ID is the row's request id (Row.RequestID); Sample is the sample's
	// number, 0 for the first.
	ID     string
	Sample int
	// Prompt is the row's prompt; Turns are what the teacher and the timer
	// added to it, in order.
	Prompt, Turns []conversation.Message
	// GroundTruth is the row's reference answer as JSON: a string, or any
	// other value, kept as its text.
	GroundTruth json.RawMessage
	// TimeLimitS is the row's limit (0: none); ElapsedS is the timer's
	// time at the end, never the teacher's claim.
	TimeLimitS, ElapsedS float64
	// OnTime and Right are the reward's verdicts on the final answer:
	// within the limit, and correct.
	OnTime, Right bool
	// TurnLimit says the teacher was still calling tools at the turn
	// limit; OutOfTime that the run stopped it when its timer passed the
	// limit.
	TurnLimit, OutOfTime bool
	// Error, when not "", says why the conversation failed: it has no
	// trace. RequestID names it in Distilled.FirstErrors.
	Error, RequestID string
}

// Teacher holds the conversations of Distill: it returns them in input
// order, nil where one did not finish, and whether the run finished (it
// was neither cancelled nor given up), or an error that stops Distill.
type Teacher func(ctx context.Context) (convs []*Conversation, finished bool, err error)

// DistillOptions says where Distill writes the traces and what their
// manifest records.
type DistillOptions struct {
	// Path is the JSONL trace file; the manifest goes beside it.
	Path string
	// Samples is the number of conversations per row: above 1, a trace's
	// custom_id is the row's id with /sample-K appended.
	Samples int
	// Rows and Skipped are the rows put to the teacher and those left out,
	// for the summary.
	Rows, Skipped int
	// Manifest holds what the caller records: tool, version, command and
	// config. Outputs and Summary are filled in.
	Manifest output.Manifest
}

// DistillSummary counts the traces by how their conversations ended.
type DistillSummary struct {
	Rows       int `json:"rows"`
	Traces     int `json:"traces"`
	OnTime     int `json:"answered_on_time"`
	Late       int `json:"answered_late_or_out_of_time"`
	Unfinished int `json:"unfinished"`
	Failed     int `json:"failed"`
	Right      int `json:"right_and_on_time"`
	Skipped    int `json:"rows_not_distilled"`
}

// Distilled is what Distill did.
type Distilled struct {
	Summary DistillSummary
	// Conversations is the number the teacher was to hold, finished or not.
	Conversations int
	// FirstErrors are the first three failed conversations:
	// "<request id>: <error>".
	FirstErrors []string
	// Written says the traces and their manifest were committed: the run
	// finished.
	Written bool
}

// Distill creates opt.Path, has teacher hold the conversations, and writes
// a trace of each finished one that did not fail, in input order, in the
// format synth sft reads (Trace.MarshalJSON). When the run finished, the
// file is committed with its manifest (summary: the DistillSummary);
// otherwise nothing is written and the previous files stay, but the
// counts are returned all the same. The failure of the file is a
// *FileError; teacher's error is returned as it is.
func Distill(ctx context.Context, opt DistillOptions, teacher Teacher) (*Distilled, error) {
	file, err := output.Create(opt.Path)
	if err != nil {
		return nil, &FileError{Role: RoleTraces, Path: opt.Path, Err: err}
	}
	defer file.Abort()
	convs, finished, err := teacher(ctx)
	if err != nil {
		return nil, err
	}
	d := &Distilled{Summary: DistillSummary{Rows: opt.Rows, Skipped: opt.Skipped}, Conversations: len(convs)}
	var buf bytes.Buffer
	for _, c := range convs {
		if c == nil {
			continue
		}
		if err := d.add(&buf, c, opt.Samples); err != nil {
			return nil, err
		}
	}
	if _, err := buf.WriteTo(file); err != nil {
		return nil, &FileError{Role: RoleTraces, Path: opt.Path, Err: err}
	}
	if !finished {
		return d, nil
	}
	traces := d.Summary.Traces
	m := opt.Manifest
	m.Outputs, m.Summary = []output.Entry{file.Entry(RoleTraces, "jsonl", &traces)}, d.Summary
	if err := output.Commit(ctx, output.ManifestPath(opt.Path), &m, file); err != nil {
		return nil, &FileError{Role: RoleTraces, Path: opt.Path, Err: err}
	}
	d.Written = true
	return d, nil
}

// add counts a finished conversation and appends its trace, unless it
// failed, to buf.
func (d *Distilled) add(buf *bytes.Buffer, c *Conversation, samples int) error {
	s := &d.Summary
	if c.Error != "" {
		s.Failed++
		if len(d.FirstErrors) < 3 {
			d.FirstErrors = append(d.FirstErrors, c.RequestID+": "+c.Error)
		}
		return nil
	}
	b, err := c.Trace(samples).MarshalJSON()
	if err != nil {
		return err
	}
	buf.Write(b)
	buf.WriteByte('\n')
	s.Traces++
	switch {
	case c.TurnLimit:
		s.Unfinished++
	case c.OutOfTime || !c.OnTime:
		s.Late++
	default:
		s.OnTime++
		if c.Right {
			s.Right++
		}
	}
	return nil
}

// Trace is the conversation's trace: the prompt and the turns, the row's
// ground truth and limit, the timer's time. samples is the number of
// conversations per row (above 1, the custom_id names the sample).
func (c *Conversation) Trace(samples int) *Trace {
	var gt string
	if err := json.Unmarshal(c.GroundTruth, &gt); err != nil {
		gt = strings.TrimSpace(string(c.GroundTruth))
	}
	t := &Trace{CustomID: c.ID, Messages: append(c.Prompt[:len(c.Prompt):len(c.Prompt)], c.Turns...), GroundTruth: gt, ElapsedS: c.ElapsedS}
	if samples > 1 {
		t.CustomID = fmt.Sprintf("%s/sample-%d", c.ID, c.Sample)
	}
	if l := c.TimeLimitS; l > 0 {
		t.TimeLimitS = &l
	}
	return t
}
