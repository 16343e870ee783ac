// Command loadgen drives a running `timeaware serve` for the service
// benchmark (bench/serve/run.sh).
//
//	loadgen -dump-corpus FILE [-corpus N] [-seed S] [-reward timely/general]
//	loadgen -mode batch -url URL [-reward timely/general [-group-size 8]] [-clients 32] [-batch 64] [-duration 15s | -items N] [-retry-429 [-retry-max 1s]]
//	loadgen -mode get_duration -url URL [-clients 64] [-timers 256] [-duration 8s]
//	loadgen -mode attack -url URL [-stall 600] [-announce 64] [-flood 2] [-deep 1] [-hog 0 -hog-bytes 30MiB]
//	        [-headers 0] [-headers-endless 0] [-header-bytes 1000000] [-header-auth] [-header-rate 128MiB] [-healthz 0] [-duration 15s]
//	loadgen -mode wait -url URL [-timeout 30s]
//
// batch sends POST /v1/score/batch with B timely/general items per request
// from N concurrent keep-alive clients. Items come from a deterministic
// corpus (corpus.go); request bodies are encoded once, before the clock
// starts. A verification pass first scores the whole corpus once and checks
// every result against the in-process Go scorer; during the timed run every
// response must hold B results and no failures, and one response in
// -check-every is parsed and checked score by score. Any error or mismatch
// makes the exit status non-zero. With -retry-429 a 429 (the server shedding
// load) is not an error: it is counted as shed, and the request is sent
// again after the server's Retry-After (at most -retry-max), as the
// project's Python client does; a request's latency includes its retries.
// Every response's "failed" count is summed (failed_items): an item error
// fails the run, since the run would then measure the error path.
//
// -reward names the reward the corpus is labelled for: timely/general (the
// default), or a length reward (length/lcpo_exact, length/lcpo_max,
// length/thinkprune, length/elastic, length/anytime, and the group-wise
// length/kimi and length/shorterbetter), for which the same responses and
// ground truths carry token counts derived from the text and budgets drawn
// from the seed (length.go). A group-wise reward's items come in groups of
// -group-size members (8), each group's answering one problem, and -batch
// is rounded down to whole groups, so that every request holds whole
// groups; each group is checked against the in-process scorer's score of
// it whole.
//
// get_duration creates M timers (POST /v1/timers) and then has N clients
// call POST /v1/tools/get_duration {"timer": token} round-robin.
//
// attack runs hostile clients (attack.go, headers.go) for -duration,
// beside a batch run, so that the benchmark can compare what legitimate
// clients get with and without them; with -healthz it also polls
// GET /healthz meanwhile. It stops early, still printing its summary, on
// SIGTERM or SIGINT.
//
// -dump-corpus writes the corpus as JSONL, so that the Python baseline
// scores the very same items, and prints its statistics, among them the
// score sum the in-process Go scorer gives.
//
// Requests go out pre-encoded on keep-alive connections (-client raw, the
// default, see client.go; -client std uses net/http). With -server-pid the
// summaries include the CPU time the server used in the measured window.
//
// A summary goes to stderr; with -json one JSON line also goes to stdout.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/timeaware/timeaware/tokenizer"
)

type config struct {
	mode        string
	url         string
	token       string
	clients     int
	batch       int
	duration    time.Duration
	warmup      time.Duration
	items       int
	corpusN     int
	seed        uint64
	reward      string
	groupSize   int
	tokenizer   string
	timers      int
	checkEvery  int
	timeout     time.Duration
	jsonOut     bool
	dump        string
	client      string
	serverPID   int
	creations   int64
	ttl         time.Duration
	idBytes     string
	probeEvery  int
	workers     int
	idleWorkers int
	speakEvery  time.Duration
	activeEvery time.Duration
	replicas    string
	stall       int
	announce    int
	flood       int
	deep        int
	hog         int
	hogBytes    int
	retry429    bool
	retryMax    time.Duration
	// The header flood (headers.go) and the /healthz poller.
	headers      int
	endless      int
	headerBytes  int
	headerPad    int
	headerAuth   bool
	headerRate   int
	headerWait   time.Duration
	endlessOver  time.Duration
	endlessEvery time.Duration
	idle         int
	idleAgain    time.Duration
	healthz      time.Duration
	healthzAfter time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.mode, "mode", "batch", "batch, get_duration, attack (hostile clients, see attack.go), workers (a cluster's keep-alive rollout workers, mostly idle, see workers.go), churn (create -creations timers with -ttl, see churn.go), sigterm (stop -server-pid under load and count lost requests, see sigterm.go) or wait (poll /healthz until the server answers)")
	flag.StringVar(&c.url, "url", "http://127.0.0.1:8080", "base URL of the service")
	flag.StringVar(&c.token, "token", os.Getenv("TIMEAWARE_SERVE_TOKEN"), "bearer token, when the service requires one")
	flag.IntVar(&c.clients, "clients", 0, "concurrent clients (default 32 for batch, 64 for get_duration)")
	flag.IntVar(&c.batch, "batch", 64, "items per batch request")
	flag.DurationVar(&c.duration, "duration", 15*time.Second, "measured time, after the warm-up")
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "load before the measurement starts (not counted)")
	flag.IntVar(&c.items, "items", 0, "batch mode: send this many items in total instead of running for -duration (no warm-up)")
	flag.IntVar(&c.corpusN, "corpus", 8192, "corpus items")
	flag.Uint64Var(&c.seed, "seed", 20260101, "corpus seed")
	flag.StringVar(&c.tokenizer, "tokenizer", "", "a length reward's counts: this tokenizer.json's count of each part (package tokenizer), for a server given the same file as rewards.length.tokenizer; default: one token per 4 bytes")
	flag.StringVar(&c.reward, "reward", "timely/general", "the reward the corpus is labelled for: timely/general, or a length reward (length/lcpo_exact, length/lcpo_max, length/thinkprune, length/elastic, length/anytime, length/kimi, length/shorterbetter) with the same responses and ground truths")
	flag.IntVar(&c.groupSize, "group-size", defaultGroupSize, "a group-wise -reward (length/kimi, length/shorterbetter): the members of each group, a divisor of -corpus; -batch is rounded down to a multiple of it")
	flag.IntVar(&c.timers, "timers", 256, "get_duration mode: timers to create")
	flag.IntVar(&c.checkEvery, "check-every", 16, "batch mode: parse and check the scores of one response in this many")
	flag.DurationVar(&c.timeout, "timeout", 30*time.Second, "wait mode: give up after this long; other modes: per-request timeout")
	flag.BoolVar(&c.jsonOut, "json", false, "also print a one-line JSON summary on stdout")
	flag.StringVar(&c.dump, "dump-corpus", "", "write the corpus as JSONL to this file and exit")
	flag.StringVar(&c.client, "client", "raw", "raw (pre-built HTTP/1.1 requests on keep-alive connections) or std (net/http)")
	flag.IntVar(&c.serverPID, "server-pid", 0, "the server's pid, to report its CPU time in the measured window (Linux)")
	flag.IntVar(&c.stall, "stall", 600, "attack mode: connections that stall mid-body")
	flag.IntVar(&c.announce, "announce", 64, "attack mode: connections that announce a 32 MiB body and send none")
	flag.IntVar(&c.flood, "flood", 2, "attack mode: clients sending ten-million-item bodies back to back")
	flag.IntVar(&c.deep, "deep", 1, "attack mode: clients sending JSON nested 100,000 deep back to back")
	flag.IntVar(&c.hog, "hog", 0, "attack mode: connections that send all but the last bytes of a -hog-bytes batch body and stall, holding the server's request memory")
	flag.IntVar(&c.hogBytes, "hog-bytes", 30<<20, "attack mode: the body length a -hog connection announces (keep it under the server's serve.max_body_bytes)")
	flag.BoolVar(&c.retry429, "retry-429", false, "batch mode: count a 429 as shed and retry after its Retry-After, instead of failing")
	flag.DurationVar(&c.retryMax, "retry-max", time.Second, "batch mode: the longest wait before a retry, whatever Retry-After asks")
	flag.IntVar(&c.headers, "headers", 0, "attack mode: connections that each send a -header-bytes request head, Content-Length 32 MiB and one body byte, then wait for the answer")
	flag.IntVar(&c.endless, "headers-endless", 0, "attack mode: connections that send a -header-bytes request head over -endless-over, then a header line every -endless-every, and never end it")
	flag.IntVar(&c.headerBytes, "header-bytes", 1_000_000, "attack mode: the length of a header flood's request head (net/http's default limit is 1 MiB)")
	flag.IntVar(&c.headerPad, "header-pad", 300, "attack mode: the padding headers that fill a header flood's head")
	flag.BoolVar(&c.headerAuth, "header-auth", true, "attack mode: the header flood sends the bearer token (-token)")
	flag.IntVar(&c.headerRate, "header-rate", 128<<20, "attack mode: bytes per second the header flood sends, all its connections together")
	flag.DurationVar(&c.headerWait, "header-wait", 30*time.Second, "attack mode: how long a -headers connection waits for an answer")
	flag.DurationVar(&c.endlessOver, "endless-over", 8*time.Second, "attack mode: the time a -headers-endless connection spreads its head over")
	flag.DurationVar(&c.endlessEvery, "endless-every", time.Second, "attack mode: the interval between the header lines a -headers-endless connection trickles after its head")
	flag.IntVar(&c.idle, "idle", 0, "attack mode: keep-alive connections that each send GET /healthz without the token, read the answer and then send nothing, as idle rollout workers do")
	flag.DurationVar(&c.idleAgain, "idle-again", 0, "attack mode: when the server closes an -idle connection, open another after this long (0: never)")
	flag.DurationVar(&c.healthz, "healthz", 0, "attack mode: poll GET /healthz at this interval, each poll on a new connection with a 1 s timeout (0: do not poll)")
	flag.DurationVar(&c.healthzAfter, "healthz-after", 0, "attack mode: start the /healthz polls this long after the attack starts")
	flag.Int64Var(&c.creations, "creations", 5_000_000, "churn mode: timers to create in all")
	flag.DurationVar(&c.ttl, "ttl", 30*time.Second, "churn mode: each timer's ttl")
	flag.StringVar(&c.idBytes, "id-bytes", "36,256", "churn mode: rollout id lengths, one per client in turn")
	flag.IntVar(&c.probeEvery, "probe-every", 1000, "churn mode: read back one timer in this many, before and after its ttl")
	flag.IntVar(&c.workers, "workers", 5000, "workers mode: keep-alive connections, one per worker")
	flag.IntVar(&c.idleWorkers, "idle-workers", 4000, "workers mode: the workers that speak once every -speak-every")
	flag.DurationVar(&c.speakEvery, "speak-every", 20*time.Second, "workers mode: how often an idle worker sends a request")
	flag.DurationVar(&c.activeEvery, "active-every", 500*time.Millisecond, "workers mode: how often an active worker sends a request")
	flag.StringVar(&c.replicas, "replicas", "", "workers mode: base URLs of the replicas, separated by commas, for workers to spread over (default -url)")
	flag.Parse()
	if flag.NArg() > 0 {
		fail("unexpected arguments %q", flag.Args())
	}
	if c.corpusN <= 0 || c.batch <= 0 || c.checkEvery <= 0 || c.timers <= 0 || c.groupSize <= 0 || c.clients < 0 {
		fail("-corpus, -batch, -check-every, -timers and -group-size must be positive, -clients non-negative")
	}
	if c.stall < 0 || c.announce < 0 || c.flood < 0 || c.deep < 0 || c.hog < 0 || c.retryMax < 0 || c.headers < 0 || c.endless < 0 || c.healthz < 0 ||
		c.idle < 0 || c.idleAgain < 0 || c.healthzAfter < 0 {
		fail("-stall, -announce, -flood, -deep, -hog, -retry-max, -headers, -headers-endless, -idle, -idle-again, -healthz and -healthz-after must not be negative")
	}
	if c.headerRate <= 0 || c.headerWait <= 0 || c.endlessOver <= 0 || c.endlessEvery <= 0 {
		fail("-header-rate, -header-wait, -endless-over and -endless-every must be positive")
	}
	var err error
	switch {
	case c.dump != "":
		err = dumpCorpus(c)
	case c.mode == "batch":
		if c.clients == 0 {
			c.clients = 32
		}
		err = runBatch(c)
	case c.mode == "get_duration":
		if c.clients == 0 {
			c.clients = 64
		}
		err = runGetDuration(c)
	case c.mode == "workers":
		err = runWorkers(c)
	case c.mode == "churn":
		if c.clients == 0 {
			c.clients = 32
		}
		err = runChurn(c)
	case c.mode == "sigterm":
		if c.clients == 0 {
			c.clients = 32
		}
		err = runSigterm(c)
	case c.mode == "wait":
		err = waitHealthy(c)
	case c.mode == "attack":
		err = runAttack(c)
	default:
		fail("-mode %q: want batch, get_duration, attack, churn, sigterm, workers or wait", c.mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "loadgen: "+format+"\n", args...)
	os.Exit(2)
}

func emit(c config, v any) {
	if !c.jsonOut {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}

type corpusStats struct {
	Reward      string  `json:"reward"`
	Items       int     `json:"corpus_items"`
	Bytes       int     `json:"corpus_bytes"`
	Hash        string  `json:"corpus_hash"`
	ScoreSum    float64 `json:"expected_score_sum"`
	Correct     int     `json:"expected_correct"`
	FormatFails int     `json:"format_fails"`
	Late        int     `json:"late"`
	OverBudget  int     `json:"over_budget"`
	GroupSize   int     `json:"group_size,omitempty"`
}

func statsOf(c *corpus) corpusStats {
	return corpusStats{Reward: c.reward.DataSource, Items: len(c.items), Bytes: c.bytes, Hash: strconv.FormatUint(c.hash, 16),
		ScoreSum: c.scoreSum, Correct: c.correct, FormatFails: c.formatFails, Late: c.late, OverBudget: c.overBudget,
		GroupSize: c.groupSize}
}

func printCorpus(s corpusStats) {
	groups := ""
	if s.GroupSize > 0 {
		groups = fmt.Sprintf(" in %d groups of %d", s.Items/s.GroupSize, s.GroupSize)
	}
	fmt.Fprintf(os.Stderr, "corpus: %d %s items%s, %.1f MB (mean %.0f B/item), hash %s; %d right, %d bad format, %d late, %d over budget; Go score sum %.6f\n",
		s.Items, s.Reward, groups, float64(s.Bytes)/1e6, float64(s.Bytes)/float64(s.Items), s.Hash, s.Correct, s.FormatFails, s.Late, s.OverBudget, s.ScoreSum)
}

// loadCorpus builds the corpus -corpus and -seed give, labelled for
// -reward.
func loadCorpus(c config) (*corpus, error) {
	r, err := lookupBenchReward(c.reward)
	if err != nil {
		return nil, err
	}
	cp, err := buildCorpus(c.corpusN, c.seed)
	if err != nil || r == cp.reward {
		if c.tokenizer != "" && err == nil {
			err = fmt.Errorf("-tokenizer: %s has no token counts; want a length reward", r.DataSource)
		}
		return cp, err
	}
	var counter tokenCounter = byteCounter{}
	if c.tokenizer != "" {
		tok, err := tokenizer.Load(c.tokenizer)
		if err != nil {
			return nil, fmt.Errorf("-tokenizer: %w", err)
		}
		counter = tok
	}
	return relabel(cp, r, c.seed, counter, c.groupSize)
}

func dumpCorpus(c config) error {
	cp, err := loadCorpus(c)
	if err != nil {
		return err
	}
	f, err := os.Create(c.dump)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for _, it := range cp.items {
		w.Write(it.line)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	s := statsOf(cp)
	printCorpus(s)
	emit(c, struct {
		Mode string `json:"mode"`
		corpusStats
	}{"dump", s})
	return nil
}

func waitHealthy(c config) error {
	cl := newStdClient(config{clients: 1, timeout: time.Second})
	deadline := time.Now().Add(c.timeout)
	var last error
	for time.Now().Before(deadline) {
		resp, err := cl.Get(c.url + "/healthz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("GET /healthz: %s", resp.Status)
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the server did not become healthy within %v: %v", c.timeout, last)
}

// latencies summarises per-request latencies.
type latencies struct {
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

func summarize(all [][]time.Duration) latencies {
	var d []time.Duration
	for _, a := range all {
		d = append(d, a...)
	}
	if len(d) == 0 {
		return latencies{}
	}
	slices.Sort(d)
	q := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(d)))) - 1
		return float64(d[min(max(i, 0), len(d)-1)]) / 1e6
	}
	return latencies{P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: float64(d[len(d)-1]) / 1e6}
}

// errorLog counts errors and keeps the first few messages.
type errorLog struct {
	mu    sync.Mutex
	n     int
	first []string
}

func (e *errorLog) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if len(e.first) < 5 {
		e.first = append(e.first, fmt.Sprintf(format, args...))
	}
}

func (e *errorLog) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

func (e *errorLog) err(what string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == 0 {
		return nil
	}
	return fmt.Errorf("%d %s; first: %q", e.n, what, e.first)
}

// ---------------------------------------------------------------- batch

type batchBody struct {
	lo  int // first corpus index; the batch is items lo..lo+B-1 (mod corpus size)
	req *request
}

type batchResponse struct {
	Results []struct {
		Score   float64 `json:"score"`
		Acc     float64 `json:"acc"`
		Correct float64 `json:"correct"`
		Error   string  `json:"error"`
	} `json:"results"`
	Failed *int `json:"failed"`
}

type batchSummary struct {
	Mode         string  `json:"mode"`
	Client       string  `json:"client"`
	Clients      int     `json:"clients"`
	Batch        int     `json:"batch"`
	Seconds      float64 `json:"seconds"`
	Requests     int64   `json:"requests"`
	Items        int64   `json:"items"`
	ItemsPerS    float64 `json:"items_per_s"`
	RequestsPerS float64 `json:"requests_per_s"`
	MBPerS       float64 `json:"request_mb_per_s"`
	latencies
	cpuUse
	ServerCPUUsPerItem *float64 `json:"server_cpu_us_per_item,omitempty"`
	Errors             int      `json:"errors"`
	Mismatches         int      `json:"mismatches"`
	// FailedItems sums the responses' "failed" counts: items the server
	// answered with an item error, in the verification pass and the timed
	// run (each must be 0).
	FailedItems int64 `json:"failed_items"`
	// With -retry-429: the 429s answered to requests first sent in the
	// measured window, how many of those requests got one or more, the 429s
	// of the verification pass, and the 429s in all (the verification pass
	// and the warm-up included).
	Retry429     bool  `json:"retry_429"`
	Shed         int64 `json:"shed"`
	ShedRequests int64 `json:"shed_requests"`
	ShedVerify   int64 `json:"shed_verify"`
	ShedAll      int64 `json:"shed_all"`
	// ShedUnfinished counts the requests first sent in the measured window
	// that were still being shed at its end (not in Requests, nor in the
	// latencies).
	ShedUnfinished int64 `json:"shed_unfinished"`
	// PerSecond is the items completed in each second of the measured
	// window (timed runs).
	PerSecond []int64 `json:"items_per_second,omitempty"`
	// VerifySeconds is how long the verification pass took.
	VerifySeconds  float64 `json:"verify_seconds"`
	Checked        int64   `json:"checked_responses"`
	ServerScoreSum float64 `json:"server_score_sum"`
	ServerCorrect  int     `json:"server_correct"`
	corpusStats
}

// doShed sends r once, or, with -retry-429, again after every 429 (the
// server shedding load), waiting what its Retry-After asks (at most
// -retry-max; -retry-max when it sends none), as the project's Python client
// does. When the wait would end after until (unless until is zero), it waits
// until then and returns the 429. shed is the number of 429s.
func doShed(c config, p doer, r *request, until time.Time) (status int, body []byte, shed int64, err error) {
	for {
		status, body, err = p.do(r)
		if err != nil || status != http.StatusTooManyRequests || !c.retry429 {
			return status, body, shed, err
		}
		shed++
		wait := c.retryMax
		if d, ok := p.retryAfter(); ok {
			wait = min(d, c.retryMax)
		}
		if !until.IsZero() && time.Now().Add(wait).After(until) {
			time.Sleep(time.Until(until))
			return status, body, shed, nil
		}
		time.Sleep(wait)
	}
}

var (
	scoreMarker  = []byte(`{"score":`)
	failedMarker = []byte(`],"failed":`)
)

// failedCount reads n from the end of a batch response,
// {"results":[...],"failed":n}.
func failedCount(body []byte) (int, bool) {
	b := bytes.TrimRight(body, "\r\n")
	if !bytes.HasSuffix(b, []byte("}")) {
		return 0, false
	}
	b = b[:len(b)-1]
	i := len(b)
	for i > 0 && b[i-1] >= '0' && b[i-1] <= '9' {
		i--
	}
	if i == len(b) || !bytes.HasSuffix(b[:i], failedMarker) {
		return 0, false
	}
	n, err := strconv.Atoi(string(b[i:]))
	return n, err == nil
}

// firstItemError is the first item error of a batch response, for a
// report.
func firstItemError(body []byte) string {
	var br batchResponse
	if err := json.Unmarshal(body, &br); err != nil {
		return fmt.Sprintf("undecodable response: %v", err)
	}
	for j, res := range br.Results {
		if res.Error != "" {
			return fmt.Sprintf("item %d of the request: %s", j, res.Error)
		}
	}
	return "no item carries an error"
}

// loadBodies loads the corpus and builds its -batch item requests.
func loadBodies(c config) ([]batchBody, error) {
	cp, err := loadCorpus(c)
	if err != nil {
		return nil, err
	}
	bodies, _, err := batchBodies(c, cp)
	return bodies, err
}

// batchBodies builds the -batch item requests over the corpus, and their
// mean body length. Batches cover the corpus in order, wrapping at the end,
// so that every item is sent equally often when the corpus size is a
// multiple of the batch. A group-wise reward's batch must be whole groups
// (groupBatch), no more than the corpus: each request then holds whole
// groups, each once, as the service requires.
func batchBodies(c config, cp *corpus) ([]batchBody, float64, error) {
	n, B := len(cp.items), c.batch
	if g := cp.groupSize; g > 1 && (B%g != 0 || B > n) {
		return nil, 0, fmt.Errorf("-batch %d: %s scores groups of %d whole; want a multiple of %d, at most the corpus's %d items",
			B, cp.reward.DataSource, g, g, n)
	}
	nb := (n + B - 1) / B
	bodies := make([]batchBody, nb)
	var reqBytes int
	for k := range nb {
		var b bytes.Buffer
		b.WriteString(`{"items":[`)
		for j := range B {
			if j > 0 {
				b.WriteByte(',')
			}
			b.Write(cp.items[(k*B+j)%n].line)
		}
		b.WriteString(`]}`)
		req, err := newRequest(c, "/v1/score/batch", b.Bytes())
		if err != nil {
			return nil, 0, err
		}
		bodies[k] = batchBody{lo: k * B, req: req}
		reqBytes += b.Len()
	}
	return bodies, float64(reqBytes) / float64(nb), nil
}

func runBatch(c config) error {
	cp, err := loadCorpus(c)
	if err != nil {
		return err
	}
	stats := statsOf(cp)
	printCorpus(stats)
	if b := groupBatch(c.batch, cp); b != c.batch {
		fmt.Fprintf(os.Stderr, "-batch %d: %d, whole groups of %d\n", c.batch, b, cp.groupSize)
		c.batch = b
	}
	n, B := len(cp.items), c.batch
	bodies, meanBody, err := batchBodies(c, cp)
	if err != nil {
		return err
	}
	nb := len(bodies)
	std := newStdClient(c)
	var errs, mism, itemErrs errorLog
	var shedWin, shedReqs, shedAll, shedUnfinished, failedItems atomic.Int64
	accKey := cp.correctKey()

	check := func(bb batchBody, body []byte, scores []float64, correct []bool) {
		var br batchResponse
		if err := json.Unmarshal(body, &br); err != nil {
			errs.add("batch %d: undecodable response: %v", bb.lo/B, err)
			return
		}
		if len(br.Results) != B {
			mism.add("batch %d: %d results for %d items", bb.lo/B, len(br.Results), B)
			return
		}
		if br.Failed == nil || *br.Failed != 0 {
			mism.add("batch %d: failed = %v, want 0", bb.lo/B, br.Failed)
		}
		for j, res := range br.Results {
			i := (bb.lo + j) % n
			want := cp.items[i].expected
			right := res.Acc
			if accKey == "correct" {
				right = res.Correct
			}
			if res.Error != "" || math.Abs(res.Score-want) > 1e-12 || (right == 1) != cp.items[i].wantAcc {
				mism.add("item %d: score %v %s %v error %q, want score %v %s %v", i, res.Score, accKey, right, res.Error, want, accKey, cp.items[i].wantAcc)
			}
			if scores != nil {
				scores[i] = res.Score
				correct[i] = right == 1
			}
		}
	}

	// Verification pass: the whole corpus once, every result checked.
	scores, correct := make([]float64, n), make([]bool, n)
	verifyStart := time.Now()
	{
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(c.clients, nb) {
			p, err := newDoer(c, std)
			if err != nil {
				return err
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := int(next.Add(1) - 1); k < nb; k = int(next.Add(1) - 1) {
					status, body, shed, err := doShed(c, p, bodies[k].req, time.Time{})
					shedAll.Add(shed)
					switch {
					case err != nil:
						errs.add("verification batch %d: %v", k, err)
					case status != http.StatusOK:
						errs.add("verification batch %d: HTTP %d: %.200s", k, status, body)
					default:
						if f, ok := failedCount(body); ok && f > 0 {
							failedItems.Add(int64(f))
							itemErrs.add("verification batch %d: %d items failed; %s", k, f, firstItemError(body))
						}
						check(bodies[k], body, scores, correct)
					}
				}
			}()
		}
		wg.Wait()
	}
	verifySecs := time.Since(verifyStart).Seconds()
	shedVerify := shedAll.Load()
	var serverSum float64
	serverCorrect := 0
	for i := range n {
		serverSum += scores[i]
		if correct[i] {
			serverCorrect++
		}
	}
	if err := errs.err("request errors in the verification pass"); err != nil {
		return err
	}
	if err := itemErrs.err("responses with item errors in the verification pass (the server refused items, so the run would measure the error path)"); err != nil {
		return err
	}
	if err := mism.err("mismatches in the verification pass"); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "verified: %d items scored by the server equal the in-process scorer (sum %.6f, %d right) in %.1f s",
		n, serverSum, serverCorrect, verifySecs)
	if shedVerify > 0 {
		fmt.Fprintf(os.Stderr, ", %d answers 429 retried", shedVerify)
	}
	fmt.Fprintln(os.Stderr)

	// Timed run.
	doers := make([]doer, c.clients)
	for i := range doers {
		if doers[i], err = newDoer(c, std); err != nil {
			return err
		}
	}
	lat := make([][]time.Duration, c.clients)
	var (
		doneReqs atomic.Int64
		checked  atomic.Int64
		issued   atomic.Int64 // items mode: items handed out
		lastDone atomic.Int64 // items mode: ns since start of the last completion
	)
	var perSecond []atomic.Int64 // timed runs: requests completed in each second of the window
	if c.items == 0 {
		perSecond = make([]atomic.Int64, int(math.Ceil(c.duration.Seconds())))
	}
	start := time.Now()
	measureFrom := start.Add(c.warmup)
	deadline := measureFrom.Add(c.duration)
	if c.items > 0 {
		measureFrom, deadline = start, start.Add(24*time.Hour)
	}
	var cpu *cpuWindow
	if c.items == 0 {
		cpu = watchCPU(c.serverPID, measureFrom, deadline)
	}
	cpuStart := sampleCPU(c.serverPID)
	var wg sync.WaitGroup
	for ci := range c.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := doers[ci]
			mine := make([]time.Duration, 0, 4096)
			for k := ci % nb; ; k = (k + c.clients) % nb {
				if c.items > 0 {
					if issued.Add(int64(B)) > int64(c.items) {
						break
					}
				} else if time.Now().After(deadline) {
					break
				}
				bb := bodies[k]
				t0 := time.Now()
				until := deadline
				if c.items > 0 {
					until = time.Time{}
				}
				status, body, shed, err := doShed(c, p, bb.req, until)
				t1 := time.Now()
				if shed > 0 {
					shedAll.Add(shed)
					if !t0.Before(measureFrom) {
						shedWin.Add(shed)
						shedReqs.Add(1)
					}
				}
				switch {
				case err != nil:
					errs.add("batch %d: %v", k, err)
					continue
				case status == http.StatusTooManyRequests && c.retry429:
					// Shed, and the deadline came before its retry.
					if !t0.Before(measureFrom) {
						shedUnfinished.Add(1)
					}
					continue
				case status != http.StatusOK:
					errs.add("batch %d: HTTP %d: %.200s", k, status, body)
					continue
				}
				if got := bytes.Count(body, scoreMarker); got != B {
					mism.add("batch %d: %d results for %d items", k, got, B)
				} else if f, ok := failedCount(body); !ok {
					mism.add("batch %d: response does not end in %s<n>}", k, failedMarker)
				} else if f > 0 {
					failedItems.Add(int64(f))
					itemErrs.add("batch %d: %d items failed; %s", k, f, firstItemError(body))
				}
				if !t0.Before(measureFrom) && !t1.After(deadline) {
					mine = append(mine, t1.Sub(t0))
					doneReqs.Add(1)
					if perSecond != nil {
						perSecond[min(int(t1.Sub(measureFrom)/time.Second), len(perSecond)-1)].Add(1)
					}
					for {
						old := lastDone.Load()
						if ns := int64(t1.Sub(start)); ns <= old || lastDone.CompareAndSwap(old, ns) {
							break
						}
					}
				}
				if seq := checked.Add(1); seq%int64(c.checkEvery) == 0 {
					check(bb, body, nil, nil)
				}
			}
			lat[ci] = mine
		}()
	}
	wg.Wait()

	secs := c.duration.Seconds()
	var use cpuUse
	if c.items > 0 {
		secs = time.Duration(lastDone.Load()).Seconds()
		cpu = &cpuWindow{done: make(chan struct{}), s0: cpuStart, s1: sampleCPU(c.serverPID)}
		close(cpu.done)
	}
	use = cpu.use()
	reqs := doneReqs.Load()
	s := batchSummary{
		Mode: "batch", Client: c.client, Clients: c.clients, Batch: B, Seconds: secs,
		Requests: reqs, Items: reqs * int64(B),
		ItemsPerS: float64(reqs*int64(B)) / secs, RequestsPerS: float64(reqs) / secs,
		MBPerS:    float64(reqs) * meanBody / secs / 1e6,
		latencies: summarize(lat), cpuUse: use, Errors: errs.count(), Mismatches: mism.count(), FailedItems: failedItems.Load(),
		Retry429: c.retry429, Shed: shedWin.Load(), ShedRequests: shedReqs.Load(), ShedVerify: shedVerify, ShedAll: shedAll.Load(),
		VerifySeconds: verifySecs, ShedUnfinished: shedUnfinished.Load(),
		Checked: checked.Load() / int64(c.checkEvery), ServerScoreSum: serverSum, ServerCorrect: serverCorrect,
		corpusStats: stats,
	}
	if use.ServerCPUS != nil && s.Items > 0 {
		v := *use.ServerCPUS / float64(s.Items) * 1e6
		s.ServerCPUUsPerItem = &v
	}
	for i := range perSecond {
		s.PerSecond = append(s.PerSecond, perSecond[i].Load()*int64(B))
	}
	fmt.Fprintf(os.Stderr, "batch: %d clients x %d items (%s client), %.1f s measured (after %.1f s warm-up): %d requests, %d items\n",
		c.clients, B, c.client, secs, c.warmup.Seconds(), reqs, s.Items)
	fmt.Fprintf(os.Stderr, "  %.0f items/s, %.0f requests/s, %.1f MB/s of request bodies (%.0f KB each)\n",
		s.ItemsPerS, s.RequestsPerS, s.MBPerS, meanBody/1024)
	fmt.Fprintf(os.Stderr, "  latency per request: p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n", s.P50, s.P90, s.P99, s.Max)
	fmt.Fprintf(os.Stderr, "  %s", use.String(secs))
	if s.ServerCPUUsPerItem != nil {
		fmt.Fprintf(os.Stderr, "; server CPU %.1f µs per item", *s.ServerCPUUsPerItem)
	}
	fmt.Fprintf(os.Stderr, "\n  errors %d, mismatches %d, failed items %d, responses checked score by score %d\n", s.Errors, s.Mismatches, s.FailedItems, s.Checked)
	if c.retry429 {
		fmt.Fprintf(os.Stderr, "  shed (429, retried after Retry-After, at most %v): %d answers to %d requests first sent in the measured window (%d of them still shed at its end); %d in the verification pass; %d in all\n",
			c.retryMax, s.Shed, s.ShedRequests, s.ShedUnfinished, s.ShedVerify, s.ShedAll)
		fmt.Fprintf(os.Stderr, "  items completed in each second of the measured window: %v\n", s.PerSecond)
	}
	emit(c, s)
	if err := errs.err("request errors"); err != nil {
		return err
	}
	if err := itemErrs.err("responses with item errors (the server refused items, so the run measured the error path)"); err != nil {
		return err
	}
	if err := mism.err("mismatches"); err != nil {
		return err
	}
	if reqs == 0 {
		return errors.New("no request completed in the measured window")
	}
	return nil
}

// ---------------------------------------------------------------- get_duration

type durationSummary struct {
	Mode      string  `json:"mode"`
	Client    string  `json:"client"`
	Clients   int     `json:"clients"`
	Timers    int     `json:"timers"`
	Seconds   float64 `json:"seconds"`
	Calls     int64   `json:"calls"`
	CallsPerS float64 `json:"calls_per_s"`
	latencies
	cpuUse
	ServerCPUUsPerCall *float64 `json:"server_cpu_us_per_call,omitempty"`
	Errors             int      `json:"errors"`
	Mismatches         int      `json:"mismatches"`
}

type getDurationResp struct {
	Text      string  `json:"text"`
	ElapsedS  float64 `json:"elapsed_s"`
	RolloutID string  `json:"rollout_id"`
}

func runGetDuration(c config) error {
	std := newStdClient(c)
	p, err := newDoer(c, std)
	if err != nil {
		return err
	}
	type timer struct {
		rollout string
		req     *request
	}
	timers := make([]timer, c.timers)
	for i := range timers {
		id := fmt.Sprintf("bench-rollout-%d", i)
		body, _ := json.Marshal(map[string]any{"rollout_id": id, "time_limit_s": 120, "speed_factor": 1 + float64(i%4)/2})
		req, err := newRequest(c, "/v1/timers", body)
		if err != nil {
			return err
		}
		status, resp, err := p.do(req)
		if err != nil {
			return fmt.Errorf("creating timer %d: %v", i, err)
		}
		if status != http.StatusCreated {
			return fmt.Errorf("creating timer %d: HTTP %d: %.200s", i, status, resp)
		}
		var rd struct {
			Timer     string `json:"timer"`
			RolloutID string `json:"rollout_id"`
		}
		if err := json.Unmarshal(resp, &rd); err != nil || rd.Timer == "" || rd.RolloutID != id {
			return fmt.Errorf("creating timer %d: unexpected response %.200s", i, resp)
		}
		b, _ := json.Marshal(map[string]string{"timer": rd.Timer})
		if timers[i].req, err = newRequest(c, "/v1/tools/get_duration", b); err != nil {
			return err
		}
		timers[i].rollout = id
	}
	doers := make([]doer, c.clients)
	for i := range doers {
		if doers[i], err = newDoer(c, std); err != nil {
			return err
		}
	}
	var errs, mism errorLog
	lat := make([][]time.Duration, c.clients)
	var calls, seq atomic.Int64
	start := time.Now()
	measureFrom := start.Add(c.warmup)
	deadline := measureFrom.Add(c.duration)
	cpu := watchCPU(c.serverPID, measureFrom, deadline)
	var wg sync.WaitGroup
	for ci := range c.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := doers[ci]
			mine := make([]time.Duration, 0, 1<<15)
			for k := ci % len(timers); ; k = (k + c.clients) % len(timers) {
				t0 := time.Now()
				if t0.After(deadline) {
					break
				}
				status, body, err := p.do(timers[k].req)
				t1 := time.Now()
				if err != nil {
					errs.add("get_duration: %v", err)
					continue
				}
				if status != http.StatusOK {
					errs.add("get_duration: HTTP %d: %.200s", status, body)
					continue
				}
				if !t0.Before(measureFrom) && !t1.After(deadline) {
					mine = append(mine, t1.Sub(t0))
					calls.Add(1)
				}
				if seq.Add(1)%64 == 0 {
					var r getDurationResp
					if err := json.Unmarshal(body, &r); err != nil || r.RolloutID != timers[k].rollout || r.Text == "" || r.ElapsedS < 0 {
						mism.add("get_duration %s: unexpected response %.200s", timers[k].rollout, body)
					}
				}
			}
			lat[ci] = mine
		}()
	}
	wg.Wait()
	use := cpu.use()
	secs := c.duration.Seconds()
	n := calls.Load()
	s := durationSummary{Mode: "get_duration", Client: c.client, Clients: c.clients, Timers: c.timers, Seconds: secs, Calls: n,
		CallsPerS: float64(n) / secs, latencies: summarize(lat), cpuUse: use, Errors: errs.count(), Mismatches: mism.count()}
	if use.ServerCPUS != nil && n > 0 {
		v := *use.ServerCPUS / float64(n) * 1e6
		s.ServerCPUUsPerCall = &v
	}
	fmt.Fprintf(os.Stderr, "get_duration: %d clients over %d timers (%s client), %.1f s measured (after %.1f s warm-up): %d calls\n",
		c.clients, c.timers, c.client, secs, c.warmup.Seconds(), n)
	fmt.Fprintf(os.Stderr, "  %.0f calls/s; latency p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, max %.2f ms\n", s.CallsPerS, s.P50, s.P90, s.P99, s.Max)
	fmt.Fprintf(os.Stderr, "  %s", use.String(secs))
	if s.ServerCPUUsPerCall != nil {
		fmt.Fprintf(os.Stderr, "; server CPU %.1f µs per call", *s.ServerCPUUsPerCall)
	}
	fmt.Fprintf(os.Stderr, "\n  errors %d, mismatches %d\n", s.Errors, s.Mismatches)
	emit(c, s)
	if err := errs.err("request errors"); err != nil {
		return err
	}
	if err := mism.err("mismatches"); err != nil {
		return err
	}
	if n == 0 {
		return errors.New("no call completed in the measured window")
	}
	return nil
}
