package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/budget"
	"github.com/timeaware/timeaware/timers"
)

// Row is one dataset row to put to the model.
type Row struct {
	// File and Line locate the row (Line is 1-based: the JSONL line, or the
	// row's position in a Parquet or Arrow file).
	File string
	Line int
	// ID names the row in the results: a pairs row's "<id>#<elapse>", a synth
	// row's extra_info.request_id or extra_info.id, else "<file>:<line>".
	ID string
	// DataSource names the reward that scores the reply.
	DataSource string
	// Prompt is the conversation sent; Tools are offered with it.
	Prompt []conversation.Message
	Tools  []conversation.Tool
	// GroundTruth and ExtraInfo are the reward's inputs, as JSON.
	GroundTruth json.RawMessage
	ExtraInfo   json.RawMessage
	// Labels are the values the report breaks the results down by
	// (sensitivity and elapse for decisions, category for TRAVELER,
	// condition for negotiation).
	Labels map[string]string
	// Timer is set for rows that run live against a timer.
	Timer *timers.Settings
	// Episode is set for negotiation rows, played as whole episodes.
	Episode *EpisodeSettings
	// Skip, when not "", says why the row is not sent.
	Skip string
}

// EpisodeSettings are what a negotiation episode needs besides the ground
// truth: the prefix the environment puts before every later turn
// (extra_info.turn_prefix).
type EpisodeSettings struct {
	TurnPrefix string
}

// rawRow is the union of the two row layouts read.
type rawRow struct {
	// VeRL RL rows (synth outputs).
	DataSource  *string         `json:"data_source"`
	Prompt      json.RawMessage `json:"prompt"`
	RewardModel *struct {
		GroundTruth json.RawMessage `json:"ground_truth"`
	} `json:"reward_model"`
	ExtraInfo json.RawMessage `json:"extra_info"`
	// Pairs rows (pairs build).
	Chosen      json.RawMessage `json:"chosen"`
	Tools       *string         `json:"tools"`
	Label       json.RawMessage `json:"label"`
	Margin      *float64        `json:"margin"`
	ID          *string         `json:"id"`
	Elapse      *int64          `json:"elapse"`
	Sensitivity *string         `json:"sensitivity"`
}

// extraFields are the extra_info fields a row's reading needs.
type extraFields struct {
	RequestID   json.RawMessage `json:"request_id"`
	ID          json.RawMessage `json:"id"`
	Timer       json.RawMessage `json:"timer"`
	TimeLimitS  *float64        `json:"time_limit_s"`
	TurnPrefix  *string         `json:"turn_prefix"`
	ToolsKwargs struct {
		GetDuration struct {
			CreateKwargs *timers.Settings `json:"create_kwargs"`
		} `json:"get_duration"`
	} `json:"tools_kwargs"`
}

// ReadRows reads the rows of one dataset file: Parquet, Arrow IPC or JSONL,
// chosen by extension. Each row is a pairs row (it has chosen and label) or
// a VeRL row (data_source, prompt, reward_model); an error names the file,
// the row and the field.
func ReadRows(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	format, ok := dataset.ForPath(path)
	if !ok {
		return nil, fmt.Errorf("eval: %s: %w", path, dataset.ErrUnknownFormat)
	}
	var rows []Row
	add := func(line []byte, n int) error {
		r, err := decodeRow(line, path, n)
		if err != nil {
			return fmt.Errorf("eval: %s: row %d: %w", path, n, err)
		}
		rows = append(rows, r)
		return nil
	}
	if format.Name == "jsonl" {
		lr := jsonscan.NewLineReader(f)
		for {
			line, n, err := lr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("eval: %s: line %d: %w", path, n, err)
			}
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			if err := add(line, n); err != nil {
				return nil, err
			}
		}
		return rows, nil
	}
	rr, err := dataset.Open(f, path, format, dataset.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer rr.Close()
	var buf bytes.Buffer
	for {
		rec, err := rr.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		buf.Reset()
		err = array.RecordToJSON(rec, &buf)
		rec.Release()
		if err != nil {
			return nil, fmt.Errorf("eval: %s: %w", path, err)
		}
		for _, line := range bytes.SplitAfter(buf.Bytes(), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			if err := add(line, len(rows)+1); err != nil {
				return nil, err
			}
		}
	}
}

// decodeRow reads one row in either layout.
func decodeRow(line []byte, file string, n int) (Row, error) {
	var raw rawRow
	if err := json.Unmarshal(line, &raw); err != nil {
		return Row{}, jsonscan.Explain("", line, err)
	}
	r := Row{File: file, Line: n}
	switch {
	case raw.Chosen != nil && raw.Label != nil && raw.Tools != nil:
		return r, decodePair(&raw, &r)
	case raw.DataSource != nil:
		return r, decodeVeRL(&raw, &r)
	}
	return Row{}, errors.New("neither a pairs row (prompt, chosen, tools, label) nor a VeRL row (data_source, prompt, reward_model)")
}

// decodePair reads a pairs row as a tictoc/decision item.
func decodePair(raw *rawRow, r *Row) error {
	var label string
	if err := json.Unmarshal(raw.Label, &label); err != nil || (label != "tool" && label != "direct") {
		return fmt.Errorf("label: want \"tool\" or \"direct\", got %s", raw.Label)
	}
	if raw.ID == nil || *raw.ID == "" {
		return errors.New("id: missing")
	}
	if raw.Elapse == nil {
		return errors.New("elapse: missing")
	}
	if err := decodePrompt(raw.Prompt, r); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(*raw.Tools), &r.Tools); err != nil {
		return jsonscan.Explain("tools", []byte(*raw.Tools), err)
	}
	gt := map[string]any{"preferred": label}
	if raw.Margin != nil {
		gt["margin"] = *raw.Margin
	}
	r.GroundTruth, _ = json.Marshal(gt)
	r.DataSource = rewards.TicTocDecision.DataSource
	r.ID = *raw.ID + "#" + strconv.FormatInt(*raw.Elapse, 10)
	r.Labels = map[string]string{"elapse": strconv.FormatInt(*raw.Elapse, 10)}
	if raw.Sensitivity != nil {
		r.Labels["sensitivity"] = *raw.Sensitivity
	}
	return nil
}

// decodeVeRL reads a VeRL RL row.
func decodeVeRL(raw *rawRow, r *Row) error {
	r.DataSource = *raw.DataSource
	if _, ok := rewards.Lookup(r.DataSource); !ok {
		return fmt.Errorf("data_source: %w %q", rewards.ErrUnknownSource, r.DataSource)
	}
	if err := decodePrompt(raw.Prompt, r); err != nil {
		return err
	}
	if raw.RewardModel == nil {
		return errors.New("reward_model: missing")
	}
	r.GroundTruth = raw.RewardModel.GroundTruth
	r.ExtraInfo = raw.ExtraInfo
	var ef extraFields
	if len(raw.ExtraInfo) > 0 && string(raw.ExtraInfo) != "null" {
		if err := json.Unmarshal(raw.ExtraInfo, &ef); err != nil {
			return jsonscan.Explain("extra_info", raw.ExtraInfo, err)
		}
	}
	r.ID = idText(ef.RequestID)
	if r.ID == "" {
		r.ID = idText(ef.ID)
	}
	if r.ID == "" {
		r.ID = r.File + ":" + strconv.Itoa(r.Line)
	}
	spec := sourceFor(r.DataSource)
	if len(spec.by) > 0 {
		var all map[string]json.RawMessage
		_ = json.Unmarshal(raw.ExtraInfo, &all)
		for _, field := range spec.by {
			if v := idText(all[field]); v != "" {
				if field == spec.curve {
					// 1000.0 (a float column) is the budget 1000, as the
					// reward reports it
					if f, err := strconv.ParseFloat(v, 64); err == nil {
						v = formatBudget(f)
					}
				}
				if r.Labels == nil {
					r.Labels = map[string]string{}
				}
				r.Labels[field] = v
			}
		}
	}
	switch spec.run {
	case runLive:
		ts := ef.ToolsKwargs.GetDuration.CreateKwargs
		if ts == nil {
			ts = &timers.Settings{}
			if len(ef.Timer) > 0 && ef.Timer[0] == '{' {
				if err := json.Unmarshal(ef.Timer, ts); err != nil {
					return jsonscan.Explain("extra_info.timer", ef.Timer, err)
				}
			}
		}
		if ef.TimeLimitS != nil && ts.TimeLimitS == 0 {
			ts.TimeLimitS = *ef.TimeLimitS
		}
		r.Timer = ts
		r.Tools = []conversation.Tool{budget.GetDurationTool("")}
	case runEpisode:
		r.Episode = &EpisodeSettings{}
		if ef.TurnPrefix != nil {
			r.Episode.TurnPrefix = *ef.TurnPrefix
		}
	case runSkip:
		r.Skip = spec.skip
	}
	return nil
}

// decodePrompt reads the prompt: a non-empty list of chat messages.
func decodePrompt(raw json.RawMessage, r *Row) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return errors.New("prompt: missing")
	}
	if err := json.Unmarshal(raw, &r.Prompt); err != nil {
		return jsonscan.Explain("prompt", raw, err)
	}
	if len(r.Prompt) == 0 {
		return errors.New("prompt: empty")
	}
	for i, m := range r.Prompt {
		if m.Role == "" {
			return fmt.Errorf("prompt[%d].role: missing", i)
		}
		if m.Content == nil && len(m.ToolCalls) == 0 {
			empty := ""
			r.Prompt[i].Content = &empty
		}
		for j, tc := range m.ToolCalls {
			if tc.Type == "" {
				r.Prompt[i].ToolCalls[j].Type = "function"
			}
			if tc.Function.Arguments == "" {
				r.Prompt[i].ToolCalls[j].Function.Arguments = "{}"
			}
		}
	}
	return nil
}

// idText renders a JSON string or number as text; "" for anything else.
func idText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	if raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9') {
		return string(raw)
	}
	if string(raw) == "true" || string(raw) == "false" {
		return string(raw)
	}
	return ""
}

// CheckRows scores every row that will be sent with an empty reply, and
// returns the first error the reward finds in what the row gives it (its
// ground_truth or extra_info), naming the file, the row and the field: a
// row the reward cannot read fails before any request is spent on it. A
// token-budget row is given the empty reply's counts (no tokens, none
// thinking, none answering), as a run gives a reply's.
func CheckRows(rows []Row, cfg rewards.Config) error {
	scorer, err := rewards.NewScorer(cfg, nil)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	for i := range rows {
		r := &rows[i]
		if r.Skip != "" {
			continue
		}
		it := rewards.Item{DataSource: r.DataSource, GroundTruth: r.GroundTruth}
		if len(r.ExtraInfo) > 0 && string(r.ExtraInfo) != "null" {
			if err := json.Unmarshal(r.ExtraInfo, &it.ExtraInfo); err != nil {
				return fmt.Errorf("eval: %s: row %d: %w", r.File, r.Line, jsonscan.Explain("extra_info", r.ExtraInfo, err))
			}
		}
		if sourceFor(r.DataSource).tokens != tokensNone {
			// The empty reply's counts, given as the run gives a reply's.
			zero := 0
			if err := (tokenFields{ThinkTokens: &zero, AnswerTokens: &zero}).apply(&it.ExtraInfo); err != nil {
				return fmt.Errorf("eval: %s: row %d: %w", r.File, r.Line, err)
			}
		}
		res := scorer.Score(context.Background(), &it)
		var fe *rewards.FieldError
		if errors.As(res.Err, &fe) && (strings.HasPrefix(fe.Field, "ground_truth") || strings.HasPrefix(fe.Field, "extra_info")) {
			return fmt.Errorf("eval: %s: row %d: %w", r.File, r.Line, res.Err)
		}
	}
	return nil
}
