package prefpairs

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/shard"
)

// ToolResponse says which calls the tool-call response repeats.
type ToolResponse string

const (
	// RepeatLastTurn repeats every call of the most recent assistant turn
	// that called tools: refreshing "the weather in A and B" needs both.
	RepeatLastTurn ToolResponse = "last_turn"
	// RepeatLastCall repeats only the very last call.
	RepeatLastCall ToolResponse = "last_call"
)

// Options configures Build. Start from DefaultOptions: the zero value of
// LabelOnlyMargin is a legal but unusual choice.
type Options struct {
	TimeFormat TimeFormat
	// MinMargin drops pairs whose margin is below it.
	MinMargin float64
	// ConfidentOnly keeps only samples the annotators were confident about
	// (S ≤ 0.5 or S ≥ 2.5), the evaluation filter of the TicToc paper, §3.5.
	ConfidentOnly bool
	// LabelOnlyMargin is the margin of samples whose class is known but S is
	// not. The default 1.0 is the least margin a confident sample can have.
	LabelOnlyMargin float64
	ToolResponse    ToolResponse
	// Scores are mean human scores per sample (from MeanScores); they take
	// precedence over scores and labels in the records.
	Scores map[SampleKey]Score
	// Direct supplies direct replies missing from the records.
	Direct *DirectAnswers
	// Generator, when set, generates direct replies that neither the record
	// nor Direct has.
	Generator DirectSource
	// Workers is the number of goroutines decoding and building; 0 means
	// GOMAXPROCS, and at least 16 when Generator is set. The requests of a
	// batch to a BoundedSource generator are sent up to its concurrency at a
	// time, whatever Workers is.
	Workers int
	// Shard, when Count > 1, keeps only the trajectories of one shard (by a
	// hash of the id, so every elapse level of a trajectory lands in the same
	// shard), to spread a corpus over processes or machines.
	Shard shard.Shard
	// Scenario names a trajectory's scenario and sensitivity (from a
	// scenario catalog, say). Nil uses the record's own fields, and the id
	// without its trailing _<n> when the record names no scenario. An error
	// fails the build, naming the record.
	Scenario func(t *conversation.Trajectory) (scenario, sensitivity string, err error)
	// Split assigns a pair to "train" or "test"; nil leaves it empty. It
	// sees the pair's metadata (id, scenario, sensitivity, elapse, label)
	// before the responses are filled in.
	Split func(p *Pair) (string, error)
	// Generated, when set, counts the direct replies queued for Generator
	// and those it returned, for a progress line while they are generated.
	Generated *GenerationProgress
	// CountOnly skips rendering and direct replies: emitted pairs carry only
	// their metadata, margin and score. A first pass that sizes a split uses
	// it; no sample is ever missing its direct reply in this mode.
	CountOnly bool
}

// DirectSource produces a direct reply for a rendered prompt. DirectGenerator
// implements it. Build calls Generate from several goroutines at once.
type DirectSource interface {
	Generate(ctx context.Context, req DirectRequest) (string, error)
}

// BoundedSource is a DirectSource that serves up to Concurrency requests at
// once and bounds its requests in flight across all callers itself, as
// DirectGenerator does with its chat client. Build hands it up to
// Concurrency requests of one batch at once, so the bound is reached however
// few batches the input has; a DirectSource without the method gets one
// request of a batch at a time.
type BoundedSource interface {
	DirectSource
	Concurrency() int
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{TimeFormat: TimeISO, LabelOnlyMargin: 1.0, ToolResponse: RepeatLastTurn}
}

func (o *Options) validate() error {
	if _, err := ParseTimeFormat(string(o.TimeFormat)); err != nil {
		return fmt.Errorf("prefpairs: %w", err)
	}
	if o.MinMargin < 0 || o.MinMargin > 1.5 || math.IsNaN(o.MinMargin) {
		return fmt.Errorf("prefpairs: min_margin %g is outside [0, 1.5]", o.MinMargin)
	}
	if o.LabelOnlyMargin < 0 || o.LabelOnlyMargin > 1.5 || math.IsNaN(o.LabelOnlyMargin) {
		return fmt.Errorf("prefpairs: label_only_margin %g is outside [0, 1.5]", o.LabelOnlyMargin)
	}
	if o.Shard.Count > 1 && (o.Shard.Index < 0 || o.Shard.Index >= o.Shard.Count) {
		return fmt.Errorf("prefpairs: shard %d/%d: want 0 <= i < n", o.Shard.Index, o.Shard.Count)
	}
	switch o.ToolResponse {
	case RepeatLastTurn, RepeatLastCall:
	default:
		return fmt.Errorf("prefpairs: tool_response %q is not last_turn or last_call", o.ToolResponse)
	}
	return nil
}

// Input is one stream of trajectories. For a v1 release file the class and
// elapse level come from its name (see InputFromName): every record is then
// one sample at that level. Otherwise (Elapse < 0) every record yields a
// sample per elapse level that has a score or label.
type Input struct {
	Name   string
	Reader io.Reader
	Label  string // PreferTool, PreferDirect, or "" when unknown
	Elapse int    // elapse level of every record, or -1
}

// InputFromName builds an Input, taking the label and elapse level from a
// TicToc v1 file name such as preferNoTool_elapse_1.json.
func InputFromName(name string, r io.Reader) Input {
	in := Input{Name: name, Reader: r, Elapse: -1}
	if label, k, ok := conversation.V1Name(name); ok {
		in.Label, in.Elapse = label, k
	}
	return in
}

// Score sources counted in the summary.
const (
	SourceAnnotations = "annotations"
	SourceRecord      = "record"
	SourceLabelOnly   = "label_only"
)

// Summary reports what a build read, kept and dropped.
type Summary struct {
	Records int            `json:"records"`
	Samples int            `json:"samples"`
	Pairs   int            `json:"pairs"`
	Inputs  []InputSummary `json:"inputs"`
	// ByLabel, BySensitivity and BySplit count the pairs written.
	ByLabel       map[string]int `json:"by_label"`
	BySensitivity map[string]int `json:"by_sensitivity"`
	BySplit       map[string]int `json:"by_split"`
	// ScoreSource counts pairs by where their preference came from.
	ScoreSource map[string]int `json:"score_source"`
	// DirectSource counts pairs by where their direct reply came from.
	DirectSource map[string]int `json:"direct_source"`
	Dropped      DropCounts     `json:"dropped"`
	// LabelDisagreements counts samples whose human score contradicts the
	// class given by the file name or record; the score wins.
	LabelDisagreements int `json:"label_disagreements"`
	// UnmatchedScores counts samples in Options.Scores that no input
	// contains: votes for trajectories the build never saw.
	UnmatchedScores int `json:"unmatched_scores"`
	// MissingDirect counts samples with no direct reply; the build fails
	// when it is not zero.
	MissingDirect    int      `json:"missing_direct"`
	MissingDirectIDs []string `json:"missing_direct_ids,omitempty"`
}

// InputSummary describes one input stream.
type InputSummary struct {
	Name    string `json:"name"`
	Label   string `json:"label,omitempty"`
	Elapse  *int   `json:"elapse,omitempty"`
	Records int    `json:"records"`
	Samples int    `json:"samples"`
}

// DropCounts counts samples that did not become pairs, by reason.
type DropCounts struct {
	Ties           int `json:"ties"`
	BelowMinMargin int `json:"below_min_margin"`
	NotConfident   int `json:"not_confident"`
	Unlabelled     int `json:"unlabelled"`
}

const maxMissingListed = 10

// Build streams pairs from the inputs to emit, in input order. It holds at
// most a few batches of records in memory at once. A malformed record stops
// the build with an error naming it; samples lacking a direct reply are
// counted and reported together in an error wrapping ErrMissingDirect once
// every input has been read, and no pair is emitted after the first of them.
func Build(ctx context.Context, inputs []Input, opt Options, emit func(*Pair) error) (*Summary, error) {
	if err := opt.validate(); err != nil {
		return nil, err
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
		if opt.Generator != nil && workers < 16 {
			workers = 16
		}
	}
	sum := &Summary{
		ByLabel: map[string]int{}, BySensitivity: map[string]int{}, BySplit: map[string]int{},
		ScoreSource: map[string]int{}, DirectSource: map[string]int{},
	}
	for _, in := range inputs {
		is := InputSummary{Name: in.Name, Label: in.Label}
		if in.Elapse >= 0 {
			e := in.Elapse
			is.Elapse = &e
		}
		sum.Inputs = append(sum.Inputs, is)
	}
	sources := make([]conversation.Source, len(inputs))
	for i, in := range inputs {
		sources[i] = conversation.Source{Name: in.Name, Reader: in.Reader}
	}
	c := newCollector(inputs, sum, emit)
	buildErr := conversation.ForEachBatch(ctx, sources, conversation.BatchOptions{Workers: workers, Prefix: "prefpairs"},
		func(ctx context.Context, b conversation.Batch) (*batch, error) {
			return process(ctx, b, inputs[b.Source], &opt)
		},
		c.add)
	inShard := len(opt.Scores)
	if opt.Shard.Count > 1 {
		inShard = 0
		for k := range opt.Scores {
			if opt.Shard.HasID(k.ID) {
				inShard++
			}
		}
	}
	sum.UnmatchedScores = inShard - c.scored
	if buildErr != nil {
		return sum, buildErr
	}
	if sum.MissingDirect > 0 {
		return sum, fmt.Errorf("prefpairs: %d samples have no direct answer, first %s; give them in the records' direct_answer, a direct-answers file, or generate them: %w",
			sum.MissingDirect, strings.Join(sum.MissingDirectIDs, ", "), ErrMissingDirect)
	}
	if sum.Pairs == 0 {
		return sum, fmt.Errorf("prefpairs: no pairs: %d samples read, %d without a score or label, %d ties, %d below min_margin, %d not confident",
			sum.Samples, sum.Dropped.Unlabelled, sum.Dropped.Ties, sum.Dropped.BelowMinMargin, sum.Dropped.NotConfident)
	}
	return sum, nil
}

// collector receives finished batches in input order, rejects repeated
// samples, counts, and hands pairs to emit.
type collector struct {
	inputs []Input
	sum    *Summary
	emit   func(*Pair) error
	// seen holds a 64-bit hash of every sample key (and the input that gave
	// it), a fraction of the memory of the keys themselves; two distinct keys
	// collide with probability about n²/2⁶⁵, 3·10⁻⁸ for a million samples.
	seen   map[uint64]int32
	seed   maphash.Seed
	scored int
	// missing is set by the first sample without a direct reply: the build
	// will fail, so nothing more is emitted, but counting goes on so the
	// error can say how many.
	missing bool
}

func newCollector(inputs []Input, sum *Summary, emit func(*Pair) error) *collector {
	return &collector{inputs: inputs, sum: sum, emit: emit, seen: map[uint64]int32{}, seed: maphash.MakeSeed()}
}

func (c *collector) add(from conversation.Batch, b *batch) error {
	sum := c.sum
	in := &sum.Inputs[from.Source]
	in.Records += b.records
	sum.Records += b.records
	sum.Dropped.add(b.dropped)
	sum.LabelDisagreements += b.disagree
	c.scored += b.scored
	for i := range b.samples {
		s := &b.samples[i]
		in.Samples++
		sum.Samples++
		h := maphash.Comparable(c.seed, s.key)
		if first, dup := c.seen[h]; dup {
			return fmt.Errorf("prefpairs: %s: record %d (id %s): sample at elapse %d was already given by %s",
				c.inputs[from.Source].Name, s.record, s.key.ID, s.key.Elapse, c.inputs[first].Name)
		}
		c.seen[h] = int32(from.Source)
		if s.missing {
			sum.MissingDirect++
			if len(sum.MissingDirectIDs) < maxMissingListed {
				sum.MissingDirectIDs = append(sum.MissingDirectIDs, fmt.Sprintf("%s (elapse %d)", s.key.ID, s.key.Elapse))
			}
			c.missing = true
		}
		if s.pair == nil || c.missing {
			continue
		}
		if err := c.emit(s.pair); err != nil {
			return err
		}
		p := s.pair
		sum.Pairs++
		sum.ByLabel[p.Label]++
		sum.BySensitivity[orUnknown(p.Sensitivity)]++
		sum.BySplit[orNone(p.Split)]++
		sum.ScoreSource[s.scoreSource]++
		if s.directSource != "" {
			sum.DirectSource[s.directSource]++
		}
	}
	return nil
}

func (d *DropCounts) add(o DropCounts) {
	d.Ties += o.Ties
	d.BelowMinMargin += o.BelowMinMargin
	d.NotConfident += o.NotConfident
	d.Unlabelled += o.Unlabelled
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// batch is what one batch of records gave: the samples in record order and
// the counts.
type batch struct {
	records  int
	samples  []builtSample
	dropped  DropCounts
	disagree int
	scored   int // samples whose score came from Options.Scores
	// pending are the pairs whose direct reply the generator is still to
	// give, in sample order.
	pending []pendingReply
}

// GenerationProgress counts the direct replies of a build: those queued for
// the generator so far and those it has returned. Its methods are safe to
// call while the build runs.
type GenerationProgress struct {
	queued, done atomic.Int64
}

// Queued is the number of direct replies queued for the generator so far.
func (g *GenerationProgress) Queued() int64 { return g.queued.Load() }

// Done is the number of direct replies the generator has returned.
func (g *GenerationProgress) Done() int64 { return g.done.Load() }

// pendingReply is a pair waiting for its generated direct reply.
type pendingReply struct {
	raw       conversation.RawRecord
	pair      *Pair
	toolReply []conversation.Message
	req       DirectRequest
}

type builtSample struct {
	key          SampleKey
	record       int
	pair         *Pair
	missing      bool
	scoreSource  string
	directSource string
}

// process builds the samples of one batch of records.
func process(ctx context.Context, from conversation.Batch, in Input, opt *Options) (*batch, error) {
	b := &batch{}
	for _, raw := range from.Records {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Another shard's record is passed over on its id alone: every
		// shard reads the whole corpus, and decoding it all would cost each
		// shard the single run's work.
		if opt.Shard.Count > 1 {
			if id, ok := conversation.RecordID(raw.Data); ok && !opt.Shard.HasID(id) {
				continue
			}
		}
		t, err := conversation.ParseTrajectory(raw)
		if err != nil {
			return nil, fmt.Errorf("prefpairs: %w", err)
		}
		if !opt.Shard.HasID(t.ID) {
			continue
		}
		b.records++
		if err := b.addTrajectory(raw, t, in, opt); err != nil {
			return nil, err
		}
	}
	if err := b.generate(ctx, opt.Generator, opt.Generated); err != nil {
		return nil, err
	}
	return b, nil
}

// generate asks gen for the batch's pending direct replies: a BoundedSource
// gets up to its Concurrency at once, any other source one at a time. The
// first failure stops the requests not yet sent and cancels those in
// flight; the error returned is that of the first failed sample in record
// order whose error is not a cancellation, or else the first cancellation.
func (b *batch) generate(ctx context.Context, gen DirectSource, prog *GenerationProgress) error {
	n := len(b.pending)
	if n == 0 {
		return nil
	}
	if prog == nil {
		prog = &GenerationProgress{}
	}
	prog.queued.Add(int64(n))
	limit := 1
	if bs, ok := gen.(BoundedSource); ok {
		limit = max(bs.Concurrency(), 1)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(limit, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if errs[i] = ctx.Err(); errs[i] != nil {
					return // a request failed, or the build was cancelled
				}
				p := &b.pending[i]
				text, err := gen.Generate(ctx, p.req)
				if err != nil {
					errs[i] = err
					cancel()
					return
				}
				setResponses(p.pair, p.toolReply, text)
				prog.done.Add(1)
			}
		}()
	}
	wg.Wait()
	var first error
	for i, err := range errs {
		if err == nil {
			continue
		}
		err = sampleError(b.pending[i].raw, b.pending[i].pair.ID, "", err)
		if !errors.Is(err, context.Canceled) {
			return err
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// setResponses makes text the pair's direct response and toolReply its
// tool-call response, chosen or rejected as its label says.
func setResponses(p *Pair, toolReply []conversation.Message, text string) {
	direct := []conversation.Message{{Role: conversation.RoleAssistant, Content: &text}}
	if p.Label == conversation.PreferTool {
		p.Chosen, p.Rejected = toolReply, direct
	} else {
		p.Chosen, p.Rejected = direct, toolReply
	}
}

// sampleError names the record and field of a problem found while building.
func sampleError(raw conversation.RawRecord, id, field string, err error) error {
	return fmt.Errorf("prefpairs: %w", &conversation.RecordError{Source: raw.Source, Record: raw.Record, Line: raw.Line, ID: id, Field: field, Err: err})
}

func (b *batch) addTrajectory(raw conversation.RawRecord, t *conversation.Trajectory, in Input, opt *Options) error {
	last := len(t.History) - 1
	if t.History[last].Role != conversation.RoleUser {
		return sampleError(raw, t.ID, fmt.Sprintf("history[%d].role", last), fmt.Errorf("the final message is %q, want the user's follow-up question", t.History[last].Role))
	}
	levels := []int{0, 1, 2}
	switch {
	case in.Elapse >= 0 && t.Elapse != nil && *t.Elapse != in.Elapse:
		return sampleError(raw, t.ID, "elapse", fmt.Errorf("%d, but the file's name says elapse level %d", *t.Elapse, in.Elapse))
	case in.Elapse >= 0:
		levels = []int{in.Elapse}
	case t.Elapse != nil:
		levels = []int{*t.Elapse}
	}
	scenario, sensitivity := t.Scenario, t.Sensitivity
	if opt.Scenario != nil {
		var err error
		if scenario, sensitivity, err = opt.Scenario(t); err != nil {
			return sampleError(raw, t.ID, "id", err)
		}
	} else if scenario == "" {
		scenario = conversation.ScenarioAlias(t.ID)
	}
	var tr *trajectoryParts
	for _, k := range levels {
		key := SampleKey{ID: t.ID, Elapse: k}
		s := builtSample{key: key, record: raw.Record}
		var score *float64
		label := in.Label
		if label == "" {
			label = t.PreferenceAt(k)
		}
		if sc, ok := opt.Scores[key]; ok {
			b.scored++
			v := sc.Mean
			score, s.scoreSource = &v, SourceAnnotations
		} else if v, ok := t.ScoreAt(k); ok {
			score, s.scoreSource = &v, SourceRecord
		} else if label != "" {
			s.scoreSource = SourceLabelOnly
		} else {
			b.dropped.Unlabelled++
			b.samples = append(b.samples, s)
			continue
		}
		var margin float64
		if score != nil {
			S := *score
			if math.Abs(S-1.5) < 1e-9 {
				b.dropped.Ties++
				b.samples = append(b.samples, s)
				continue
			}
			scored := conversation.PreferDirect
			if S > 1.5 {
				scored = conversation.PreferTool
			}
			if label != "" && label != scored {
				b.disagree++
			}
			label = scored
			margin = math.Abs(S - 1.5)
			if opt.ConfidentOnly && S > 0.5 && S < 2.5 {
				b.dropped.NotConfident++
				b.samples = append(b.samples, s)
				continue
			}
		} else {
			margin = opt.LabelOnlyMargin
		}
		if margin < opt.MinMargin {
			b.dropped.BelowMinMargin++
			b.samples = append(b.samples, s)
			continue
		}
		p := &Pair{Margin: margin, Score: score, ID: t.ID, Scenario: scenario, Sensitivity: sensitivity, Elapse: k, Label: label}
		if opt.Split != nil {
			split, err := opt.Split(p)
			if err != nil {
				return sampleError(raw, t.ID, "", err)
			}
			p.Split = split
		}
		if opt.CountOnly {
			s.pair = p
			b.samples = append(b.samples, s)
			continue
		}
		if tr == nil {
			var err error
			if tr, err = newTrajectoryParts(raw, t, opt); err != nil {
				return err
			}
		}
		p.Tools = tr.tools
		p.Prompt = tr.prompt(k, opt.TimeFormat)
		text, src := storedReply(t, key, opt)
		switch {
		case src != "":
			setResponses(p, tr.toolReply, text)
			s.directSource, s.pair = src, p
		case opt.Generator == nil:
			s.missing = true
		default:
			s.directSource, s.pair = DirectFromGenerator, p
			b.pending = append(b.pending, pendingReply{raw: raw, pair: p, toolReply: tr.toolReply,
				req: DirectRequest{Key: key, Messages: p.Prompt, Tools: t.Tools}})
		}
		b.samples = append(b.samples, s)
	}
	return nil
}

// Direct reply sources counted in the summary.
const (
	DirectFromRecord    = "record"
	DirectFromSideFile  = "side_file"
	DirectFromGenerator = "generated"
)

// storedReply returns the sample's direct reply from the record or the
// direct-answers file and where it came from, or "", "" when neither has
// one.
func storedReply(t *conversation.Trajectory, key SampleKey, opt *Options) (string, string) {
	if s, ok := t.DirectAnswerAt(key.Elapse); ok && strings.TrimSpace(s) != "" {
		return s, DirectFromRecord
	}
	if s, ok := opt.Direct.Lookup(key); ok {
		return s, DirectFromSideFile
	}
	return "", ""
}

// trajectoryParts holds what every sample of one trajectory shares.
type trajectoryParts struct {
	t         *conversation.Trajectory
	rendered  []conversation.Message // all but the final message, time-stamped
	prevTime  time.Time
	tools     string
	toolReply []conversation.Message
}

func newTrajectoryParts(raw conversation.RawRecord, t *conversation.Trajectory, opt *Options) (*trajectoryParts, error) {
	tr := &trajectoryParts{t: t}
	tr.tools = "[]"
	if len(t.ToolsJSON) > 0 {
		// t is the build's own, parsed for this record, and nothing writes
		// its ToolsJSON: the string can alias it rather than copy it.
		tr.tools = unsafe.String(&t.ToolsJSON[0], len(t.ToolsJSON))
	}
	calls := t.ToolCall
	if len(calls) == 0 {
		turn := t.LastToolCallTurn()
		if turn < 0 {
			return nil, sampleError(raw, t.ID, "history", errors.New("no assistant tool call to repeat; give the call in the record's tool_call field"))
		}
		calls = t.History[turn].ToolCalls
		if opt.ToolResponse == RepeatLastCall {
			calls = calls[len(calls)-1:]
		}
		refreshed := make([]conversation.ToolCall, len(calls))
		for j, c := range calls {
			c.ID = refreshID(c.ID, j)
			refreshed[j] = c
		}
		calls = refreshed
	}
	tr.toolReply = []conversation.Message{{Role: conversation.RoleAssistant, ToolCalls: calls}}

	last := len(t.History) - 1
	tr.rendered = t.History[:last]
	if opt.TimeFormat != TimeNone {
		if field, err := t.CheckTimes(); err != nil {
			return nil, sampleError(raw, t.ID, field, err)
		}
		tr.rendered = make([]conversation.Message, last)
		size := 0
		for i := 0; i < last; i++ {
			size += len(t.History[i].Text()) + 1 + stampBytes
		}
		st := stamper{buf: make([]byte, 0, size), contents: make([]string, last)}
		var prev time.Time
		for i := 0; i < last; i++ {
			tr.rendered[i] = st.stamp(t.History[i], opt.TimeFormat, t.History[i].Time, prev)
			prev = t.History[i].Time
		}
		tr.prevTime = prev
	}
	return tr, nil
}

func refreshID(id string, j int) string {
	if id == "" {
		return "call_refresh_" + strconv.Itoa(j)
	}
	return id + "_refresh"
}

// prompt returns the rendered conversation for one elapse level: the shared
// history plus the final question stamped with that level's time.
func (tr *trajectoryParts) prompt(elapse int, f TimeFormat) []conversation.Message {
	last := len(tr.t.History) - 1
	p := make([]conversation.Message, last+1)
	copy(p, tr.rendered)
	final := tr.t.History[last]
	if f != TimeNone {
		st := stamper{buf: make([]byte, 0, len(final.Text())+1+stampBytes), contents: make([]string, 1)}
		final = st.stamp(final, f, tr.t.FinalTimes[elapse], tr.prevTime)
	}
	p[last] = final
	return p
}

// stampBytes is room enough for most time stamps and the space after them
// ("[2025-01-02T10:00:00Z] ", or with iso_delta "; 12 minutes passed" too);
// a longer one only makes the stamper's buffer grow.
const stampBytes = 48

// stamper writes the stamped contents of a trajectory's messages one after
// the other into buf, so that they cost one allocation together rather
// than two each (the text and the string pointed to). The strings alias
// buf: a byte once written is never written again, and when buf grows the
// strings keep its old array.
type stamper struct {
	buf      []byte
	contents []string // the strings the messages point to, in order
}

// stamp returns the message with its content prefixed by the time stamp.
func (s *stamper) stamp(m conversation.Message, f TimeFormat, at, prev time.Time) conversation.Message {
	start := len(s.buf)
	s.buf = appendTimePrefix(s.buf, f, at, prev)
	if m.Content != nil && *m.Content != "" {
		s.buf = append(append(s.buf, ' '), *m.Content...)
	}
	c := &s.contents[0]
	s.contents = s.contents[1:]
	*c = unsafe.String(&s.buf[start], len(s.buf)-start)
	m.Content = c
	return m
}
