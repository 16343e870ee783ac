package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/budget"
	"github.com/timeaware/timeaware/synth/negotiation"
	"github.com/timeaware/timeaware/timers"
)

// Defaults of Options.
const (
	DefaultWorkers  = 8
	DefaultMaxTurns = 8
)

// Options configures Run.
type Options struct {
	// Client asks the model. Required.
	Client *chat.Client
	// Rewards configures the scorer (stop strings, Timely parameters, ...).
	Rewards rewards.Config
	// Samples is the number of replies asked per row (default 1); sample k
	// is sent with seed Seed+k, so samples differ at a temperature above 0
	// and each has its own cache entry.
	Samples int
	// Temperature and MaxTokens are sent with every request (MaxTokens 0:
	// the server's limit).
	Temperature float64
	MaxTokens   int
	// Seed seeds the requests, the timers' jitter and nothing else.
	Seed int64
	// MaxTurns bounds a live row's model calls (default DefaultMaxTurns);
	// a row still calling tools then is scored on its last reply.
	MaxTurns int
	// Workers is the number of rows in flight (default DefaultWorkers); the
	// client bounds the HTTP requests.
	Workers int
	// ToolChoice is sent with requests that offer tools: "auto" (the
	// default) asks the server to parse tool calls, which vLLM serves only
	// when started with --enable-auto-tool-choice and a --tool-call-parser;
	// "none" renders the tools in the prompt and leaves the calls in the
	// reply's text, where the runner and the rewards read Hermes-style
	// <tool_call> blocks; "omit" sends no tool_choice.
	ToolChoice string
	// StopAtLimit ends a live row once its timer passes the row's time
	// limit: a teacher that has run out of budget is not asked on.
	StopAtLimit bool
	// OpponentBeta shapes the scripted negotiation opponent's concession
	// curve (see negotiation.Concession); 0 means 1.
	OpponentBeta float64
	// Opponent, when set, plays the other role of negotiation rows instead
	// of the scripted one (a negotiation.ModelOpponent, say).
	Opponent negotiation.Opponent
	// Done, when set, is called after each finished result, from any
	// goroutine.
	Done func(r *Result)
}

// Result is one reply to one row, scored: a line of RESULTS.jsonl.
type Result struct {
	// Index is the result's position: row × samples + sample.
	Index int `json:"index"`
	// Row is the row's position among all rows read.
	Row        int    `json:"row"`
	File       string `json:"file"`
	Line       int    `json:"line"`
	RequestID  string `json:"request_id"`
	DataSource string `json:"data_source"`
	Sample     int    `json:"sample"`
	// Reply is the final reply as the reward read it: its text, or the
	// assistant message as JSON when it called tools.
	Reply string `json:"reply"`
	// Turns holds what a live row added to the conversation: the model's
	// messages and the tool's answers, in order.
	Turns []conversation.Message `json:"turns,omitempty"`
	// Score and Details are the reward's result.
	Score   float64            `json:"score"`
	Details map[string]float64 `json:"details"`
	Labels  map[string]string  `json:"labels,omitempty"`
	// Cached says every reply came from the cache.
	Cached bool `json:"cached"`
	// TurnLimit says a live row was still calling tools when it reached
	// the turn limit; it is scored on that last reply.
	TurnLimit bool `json:"turn_limit,omitempty"`
	// OutOfTime says a live row was stopped when its timer passed the time
	// limit (Options.StopAtLimit), still calling tools.
	OutOfTime bool `json:"out_of_time,omitempty"`
	// Error says why the row has no score (the request or the scoring
	// failed); Skipped says why it was not sent. Such results are left out
	// of the metrics.
	Error   string `json:"error,omitempty"`
	Skipped string `json:"skipped,omitempty"`
}

// Run puts every row to the model Samples times and scores the replies. It
// returns the results in input order, one per row and sample. When ctx is
// cancelled it stops sending, and returns what finished (the others nil)
// with ctx's error.
func Run(ctx context.Context, rows []Row, opt Options) ([]*Result, error) {
	if opt.Client == nil {
		return nil, errors.New("eval: no chat client")
	}
	if opt.Samples <= 0 {
		opt.Samples = 1
	}
	if opt.MaxTurns <= 0 {
		opt.MaxTurns = DefaultMaxTurns
	}
	if opt.Workers <= 0 {
		opt.Workers = DefaultWorkers
	}
	switch opt.ToolChoice {
	case "":
		opt.ToolChoice = "auto"
	case "auto", "none", "omit":
	default:
		return nil, fmt.Errorf("eval: tool choice %q: want auto, none or omit", opt.ToolChoice)
	}
	if opt.Temperature < 0 || opt.MaxTokens < 0 {
		return nil, fmt.Errorf("eval: temperature %g and max tokens %d must not be negative", opt.Temperature, opt.MaxTokens)
	}
	secret := timers.RandomSecret()
	results := make([]*Result, len(rows)*opt.Samples)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range opt.Workers {
		wk, err := newWorker(opt, secret)
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(results) {
					return
				}
				r := wk.run(ctx, rows, i)
				if r == nil {
					return // cancelled mid-row
				}
				results[i] = r
				if opt.Done != nil {
					opt.Done(r)
				}
			}
		}()
	}
	wg.Wait()
	return results, ctx.Err()
}

// worker runs one row at a time with its own timer store, whose clock
// advances only by the time the model took: a timer reads the same
// whether its replies came over the wire or from the cache.
type worker struct {
	opt    Options
	now    int64 // the store's clock, in Unix nanoseconds
	store  *timers.Store
	scorer *rewards.Scorer
}

// clockEpoch is the instant a worker's timer clock starts each live row at.
var clockEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

func newWorker(opt Options, secret []byte) (*worker, error) {
	w := &worker{opt: opt, now: clockEpoch}
	store, err := timers.New(timers.Options{Secret: secret, Now: func() time.Time { return time.Unix(0, w.now) }, MaxRollouts: 64})
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	w.store = store
	if w.scorer, err = rewards.NewScorer(opt.Rewards, store); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	return w, nil
}

// run evaluates result i; nil when ctx was cancelled before it finished.
func (w *worker) run(ctx context.Context, rows []Row, i int) *Result {
	row := &rows[i/w.opt.Samples]
	k := i % w.opt.Samples
	r := &Result{
		Index: i, Row: i / w.opt.Samples, File: row.File, Line: row.Line, RequestID: row.ID,
		DataSource: row.DataSource, Sample: k, Labels: row.Labels, Details: map[string]float64{},
	}
	if row.Skip != "" {
		r.Skipped = row.Skip
		return r
	}
	seed := w.opt.Seed + int64(k)
	item := rewards.Item{DataSource: row.DataSource, GroundTruth: row.GroundTruth}
	if len(row.ExtraInfo) > 0 && string(row.ExtraInfo) != "null" {
		if err := json.Unmarshal(row.ExtraInfo, &item.ExtraInfo); err != nil {
			r.Error = jsonscan.Explain("extra_info", row.ExtraInfo, err).Error()
			return r
		}
	}
	var err error
	switch {
	case row.Timer != nil:
		err = w.live(ctx, row, seed, r, &item)
	case row.Episode != nil:
		err = w.episode(ctx, row, seed, r, &item)
	default:
		err = w.once(ctx, row, seed, r, &item)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		r.Error = err.Error()
		return r
	}
	res := w.scorer.Score(ctx, &item)
	if res.Err != nil {
		if ctx.Err() != nil {
			return nil
		}
		r.Error = "score: " + res.Err.Error()
		return r
	}
	rw, _ := rewards.Lookup(row.DataSource)
	r.Score = res.Score
	for j, key := range rw.Keys {
		r.Details[key] = res.Details[j]
	}
	if label := sourceFor(row.DataSource).curve; label != "" {
		r.Labels = withLabel(row.Labels, label, formatBudget(r.Details[budgetLabel]))
	}
	return r
}

// withLabel is labels with key set to v, a copy: a row's labels are
// shared by its samples' results. A scored length result is labelled by
// the budget its reward applied (the detail token_budget: the row's
// extra_info.token_budget, or the configured limit without one); one
// without a score keeps the row's label.
func withLabel(labels map[string]string, key, v string) map[string]string {
	out := make(map[string]string, len(labels)+1)
	maps.Copy(out, labels)
	out[key] = v
	return out
}

func (w *worker) request(msgs []conversation.Message, row *Row, seed int64) chat.Request {
	req := chat.Request{Messages: msgs, Temperature: w.opt.Temperature, MaxTokens: w.opt.MaxTokens, Seed: &seed}
	if len(row.Tools) > 0 {
		req.Tools = row.Tools
		if w.opt.ToolChoice != "omit" {
			req.ToolChoice = w.opt.ToolChoice
		}
	}
	return req
}

// once asks for one reply.
func (w *worker) once(ctx context.Context, row *Row, seed int64, r *Result, item *rewards.Item) error {
	reply, err := w.opt.Client.Complete(ctx, w.request(row.Prompt, row, seed))
	if err != nil {
		return err
	}
	r.Cached = reply.Cached
	r.Reply = replyText(reply)
	item.SolutionStr = r.Reply
	if need := sourceFor(row.DataSource).tokens; need != tokensNone {
		lc := w.opt.Rewards.Length
		text, fields, err := tokenCounts(reply, r.Reply, need, lc.ThinkOpen, lc.ThinkClose)
		if err != nil {
			return err
		}
		if err := fields.apply(&item.ExtraInfo); err != nil {
			return err
		}
		r.Reply, item.SolutionStr = text, text
	}
	return nil
}

// live runs the tool loop of a timed row: each get_duration call is
// answered with the timer's reading, other tools with an error text, until
// the model answers without calling a tool or MaxTurns replies were asked.
// The reward then reads the stopped timer.
func (w *worker) live(ctx context.Context, row *Row, seed int64, r *Result, item *rewards.Item) error {
	// Every live row starts at the same instant of the store's clock, so
	// its readings (jitter included) depend only on its replies' times.
	w.now = clockEpoch
	ts := row.Timer
	rd, err := w.store.Create(timers.Spec{
		SpeedFactor: ts.SpeedFactor, Jitter: ts.Jitter, TimeLimitS: ts.TimeLimitS,
		TTL: time.Duration(ts.TTLS * float64(time.Second)), Seed: timerSeed(row.ID, seed),
	})
	if err != nil {
		return fmt.Errorf("timer: %w", err)
	}
	tok := rd.Timer
	msgs := append([]conversation.Message(nil), row.Prompt...)
	r.Cached = true
	var last chat.Reply
	answered := false
	for turn := range w.opt.MaxTurns {
		last, err = w.opt.Client.Complete(ctx, w.request(msgs, row, seed))
		if err != nil {
			return err
		}
		r.Cached = r.Cached && last.Cached
		w.now += int64(last.Latency)
		calls, structured := last.ToolCalls, true
		if len(calls) == 0 {
			calls, structured = textToolCalls(last.Content), false
		}
		am := conversation.Message{Role: "assistant"}
		if last.Content != "" || !structured || len(calls) == 0 {
			text := last.Content
			am.Content = &text
		}
		if structured {
			am.ToolCalls = calls
		}
		r.Turns = append(r.Turns, am)
		if len(calls) == 0 {
			answered = true
			break
		}
		if turn == w.opt.MaxTurns-1 {
			break // no answer the model would never read
		}
		if w.opt.StopAtLimit && ts.TimeLimitS > 0 {
			rd, err := w.store.Read(tok)
			if err != nil {
				return fmt.Errorf("timer: %w", err)
			}
			if rd.ElapsedS > ts.TimeLimitS {
				r.OutOfTime = true
				break
			}
		}
		msgs = append(msgs, am)
		for _, c := range calls {
			answer := fmt.Sprintf("error: no tool named %q; the only tool is %s", c.Function.Name, budget.GetDurationName)
			if c.Function.Name == budget.GetDurationName {
				rd, err := w.store.Read(tok)
				if err != nil {
					return fmt.Errorf("timer: %w", err)
				}
				tok, answer = rd.Timer, rd.Text
			}
			tm := conversation.Message{Role: "tool", Content: &answer, Name: c.Function.Name}
			if structured {
				tm.ToolCallID = c.ID
			}
			msgs = append(msgs, tm)
			r.Turns = append(r.Turns, tm)
		}
	}
	r.TurnLimit = !answered && !r.OutOfTime
	final := last
	stopped, err := w.store.Stop(tok)
	if err != nil {
		return fmt.Errorf("timer: %w", err)
	}
	r.Reply = replyText(final)
	item.SolutionStr = r.Reply
	item.ExtraInfo.Timer = rewards.TimerToken(stopped.Timer)
	return nil
}

// timerSeed derives a live row's jitter seed from its id and request seed,
// so a rerun shows the model the same times.
func timerSeed(id string, seed int64) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", id, seed)
	if s := h.Sum64(); s != 0 {
		return s
	}
	return 1
}

// replyText is the reply as the rewards read it: its text, or, when it
// calls tools, the assistant message as JSON (which the TicToc tool-call
// detector recognises).
func replyText(r chat.Reply) string {
	if len(r.ToolCalls) == 0 {
		return r.Content
	}
	m := struct {
		Role      string                  `json:"role"`
		Content   string                  `json:"content"`
		ToolCalls []conversation.ToolCall `json:"tool_calls"`
	}{"assistant", r.Content, r.ToolCalls}
	b, _ := json.Marshal(m)
	return string(b)
}

// textToolCalls reads the Hermes-style calls written in a reply's text, as
// a model served without a tool-call parser writes them, the way the
// tictoc/decision reward reads them (rewards.HermesCalls).
func textToolCalls(s string) []conversation.ToolCall {
	var calls []conversation.ToolCall
	for _, c := range rewards.HermesCalls(s) {
		args := strings.TrimSpace(string(c.Arguments))
		if args == "" || args == "null" {
			args = "{}"
		}
		calls = append(calls, conversation.ToolCall{Type: "function", Function: conversation.FunctionCall{Name: c.Name, Arguments: conversation.Arguments(args)}})
	}
	return calls
}

// episode plays a negotiation row against the scripted opponent: each reply
// of the model is its turn ({"text", "action"}, as the row's prompt asks),
// charged its generation time on the clock; the opponent's answers come
// back as the next user turn, with the condition's prefix. The episode ends
// in a deal, a walk-away or the budget spent, or after MaxTurns replies;
// the reward then scores the whole transcript.
func (w *worker) episode(ctx context.Context, row *Row, seed int64, r *Result, item *rewards.Item) error {
	var opp negotiation.Opponent = negotiation.Concession{Beta: w.opt.OpponentBeta}
	if w.opt.Opponent != nil {
		opp = w.opt.Opponent
	}
	ep, err := negotiation.NewEpisode(row.GroundTruth, row.Episode.TurnPrefix, opp, w.scorer)
	if err != nil {
		return err
	}
	msgs := append([]conversation.Message(nil), row.Prompt...)
	r.Cached = true
	for turn := range w.opt.MaxTurns {
		reply, err := w.opt.Client.Complete(ctx, w.request(msgs, row, seed))
		if err != nil {
			return err
		}
		r.Cached = r.Cached && reply.Cached
		r.Reply = reply.Content
		text := reply.Content
		am := conversation.Message{Role: "assistant", Content: &text}
		msgs = append(msgs, am)
		r.Turns = append(r.Turns, am)
		agent := rewards.NegotiationTurn{Text: reply.Content, ThinkS: reply.Latency.Seconds()}
		if parsed, err := rewards.ParseNegotiationTranscript(reply.Content); err == nil && len(parsed) == 1 {
			agent.Text, agent.Action = parsed[0].Text, parsed[0].Action
		}
		st, err := ep.Step(ctx, agent)
		if err != nil {
			return err
		}
		if st.Done {
			if st.Reply != nil {
				shown := st.Shown
				r.Turns = append(r.Turns, conversation.Message{Role: "user", Content: &shown})
			}
			break
		}
		if turn == w.opt.MaxTurns-1 {
			r.TurnLimit = true
			break
		}
		shown := st.Shown
		um := conversation.Message{Role: "user", Content: &shown}
		msgs = append(msgs, um)
		r.Turns = append(r.Turns, um)
	}
	transcript, err := json.Marshal(ep.Transcript())
	if err != nil {
		return err
	}
	item.SolutionStr = string(transcript)
	return nil
}
