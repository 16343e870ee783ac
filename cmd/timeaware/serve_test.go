package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// serverBinary builds the real timeaware binary once per test run.
func serverBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "timeaware-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "timeaware")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// lockedBuffer is a bytes.Buffer safe for the process's writer goroutine
// and the test's reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serverProc is a running `timeaware serve`.
type serverProc struct {
	cmd      *exec.Cmd
	addr     string // the bound host:port, read from --addr-file
	addrFile string
	url      string
	stderr   *lockedBuffer
	done     chan error
}

// startServer starts the binary on a port the kernel picks (--addr
// 127.0.0.1:0) and returns once it answers /healthz.
func startServer(t *testing.T, env ...string) *serverProc {
	t.Helper()
	return startServerArgs(t, env, "--addr", "127.0.0.1:0")
}

// startServerArgs starts `timeaware serve` with args and --addr-file, reads
// the bound address from the file and polls /healthz on it until it
// answers 200; the process is stopped at the end of the test. A wildcard
// address (0.0.0.0, [::]) is reached over loopback.
func startServerArgs(t *testing.T, env []string, args ...string) *serverProc {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(serverBinary(t), append([]string{"serve", "--addr-file", addrFile}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	p := &serverProc{cmd: cmd, addrFile: addrFile, stderr: stderr, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() { p.stop(t) })
	p.addr = waitForAddrFile(t, p, addrFile)
	host, port, err := net.SplitHostPort(p.addr)
	require.NoError(t, err)
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	p.url = "http://" + net.JoinHostPort(host, port)
	p.waitHealthy(t, 20*time.Second)
	return p
}

// waitForAddrFile polls for the address file until the deadline, failing
// the test at once if the process exits first.
func waitForAddrFile(t *testing.T, p *serverProc, path string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil {
			return strings.TrimSpace(string(b))
		}
		p.failIfExited(t)
		if time.Now().After(deadline) {
			t.Fatalf("server did not write %s within 20s\n%s", path, p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitHealthy polls /healthz until it answers 200 or the deadline passes.
func (p *serverProc) waitHealthy(t *testing.T, within time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(within)
	for {
		resp, err := client.Get(p.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		p.failIfExited(t)
		if time.Now().After(deadline) {
			t.Fatalf("server at %s did not answer /healthz within %v\n%s", p.url, within, p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *serverProc) failIfExited(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		t.Fatalf("server exited early: %v\n%s", err, p.stderr.String())
	default:
	}
}

// stop sends SIGTERM and waits for the exit status; it is idempotent.
func (p *serverProc) stop(t *testing.T) error {
	select {
	case err := <-p.done: // already exited
		p.done <- err
		return err
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		p.done <- err
		return err
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Errorf("server did not stop on SIGTERM\n%s", p.stderr.String())
		return fmt.Errorf("killed")
	}
}

func postJSON(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	return doJSON(t, "POST", url, body)
}

func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	return doJSON(t, "GET", url, "")
}

// doJSON sends a request and decodes the JSON reply.
func doJSON(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	return resp.StatusCode, out
}

// TestServeTimersAcrossProcesses: a timer created by one server process is
// read by a second one that shares the secret, and by the first after a
// restart; a process with another secret refuses it.
func TestServeTimersAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	secret := "TIMEAWARE_TIMERS_SECRET=replicas-share-this-secret-0001"
	a := startServer(t, secret)
	b := startServer(t, secret)

	code, created := postJSON(t, a.url+"/v1/timers", `{"rollout_id":"rollout-42","speed_factor":4,"time_limit_s":60}`)
	require.Equal(t, 201, code, "%v", created)
	tok := created["timer"].(string)
	// A simulated 20 s tool call, reported to replica B.
	code, spanned := postJSON(t, b.url+"/v1/timers/"+tok+"/spans", `{"seconds":20,"simulated":true}`)
	require.Equal(t, 200, code, "%v", spanned)
	tok = spanned["timer"].(string)
	time.Sleep(300 * time.Millisecond)

	readA := func(p *serverProc) float64 {
		code, r := postJSON(t, p.url+"/v1/tools/get_duration", `{"timer":"`+tok+`"}`)
		require.Equal(t, 200, code, "%v", r)
		assert.Equal(t, "rollout-42", r["rollout_id"])
		assert.Regexp(t, `^\d+\.\d\d seconds\.$`, r["text"])
		return r["elapsed_s"].(float64)
	}
	onA, onB := readA(a), readA(b)
	// Generation time is scaled by 4, the simulated tool time is not.
	assert.GreaterOrEqual(t, onA, 20+4*0.3)
	assert.Less(t, onA, 20+4*10.0)
	assert.InDelta(t, onA, onB, 4*1.0, "replicas read the same timer")

	// Restart A (on another port: the token carries the timer, not the
	// address): the token still reads, and time kept running.
	require.NoError(t, a.stop(t))
	a2 := startServer(t, secret)
	assert.Greater(t, readA(a2), onA)

	// A rollout id is known to a replica that created its timer or was
	// shown its token; the token works anywhere.
	code, r := postJSON(t, b.url+"/v1/tools/get_duration", `{"rollout_id":"rollout-42"}`)
	assert.Equal(t, 200, code, "B saw the span, so it knows the rollout: %v", r)
	code, r = postJSON(t, a2.url+"/v1/tools/get_duration", `{"rollout_id":"rollout-42"}`)
	assert.Equal(t, 200, code, "the restarted A was shown the token: %v", r)
	code, r = postJSON(t, startServer(t, secret).url+"/v1/tools/get_duration", `{"rollout_id":"rollout-42"}`)
	assert.Equal(t, 404, code, "a replica that saw nothing of it: %v", r)

	// The reward reads the timer through the item.
	item := fmt.Sprintf(`{"items":[{"data_source":"timely/general","solution_str":"<answer>1/2</answer>","ground_truth":"0.5","extra_info":{"timer":%q}}]}`, tok)
	code, scored := postJSON(t, b.url+"/v1/score/batch", item)
	require.Equal(t, 200, code, "%v", scored)
	res := scored["results"].([]any)[0].(map[string]any)
	assert.Equal(t, 60.0, res["time_limit_s"])
	assert.Equal(t, 1.0, res["acc"])
	assert.NotContains(t, res, "error")

	other := startServer(t, "TIMEAWARE_TIMERS_SECRET=a-different-secret-entirely-02")
	code, r = getJSON(t, other.url+"/v1/timers/"+tok)
	assert.Equal(t, 400, code)
	assert.Equal(t, "invalid_timer", r["error"].(map[string]any)["code"])
}

// metrics reads the server's /metrics through client: each series, named
// in full with its labels, to its value.
func (p *serverProc) metrics(client *http.Client) (map[string]float64, error) {
	resp, err := client.Get(p.url + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if f, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = f
		}
	}
	return out, nil
}

// metric reads one series of the server's /metrics through client; -1 when
// it is absent or the read fails.
func (p *serverProc) metric(client *http.Client, series string) float64 {
	m, err := p.metrics(client)
	if v, ok := m[series]; err == nil && ok {
		return v
	}
	return -1
}

// TestServeDrainsInFlightRequestOnShutdown: SIGTERM while a request's body
// is still arriving; readiness fails, the listener closes after the grace
// period, the request completes and the process exits 0. Each step waits
// for the state it checks; the grace is the window in which readiness must
// be seen failing, 3 s here so that a loaded machine has time to look.
func TestServeDrainsInFlightRequestOnShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	const grace = 3 * time.Second
	p := startServer(t, "TIMEAWARE_SERVE_TOKEN=tok", "TIMEAWARE_SERVE_SHUTDOWN_GRACE=3s")
	client := &http.Client{Timeout: 5 * time.Second}

	pr, pw := io.Pipe()
	req, err := http.NewRequest("POST", p.url+"/v1/score/batch", pr)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	type reply struct {
		code int
		body []byte
		err  error
	}
	replies := make(chan reply, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			replies <- reply{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		replies <- reply{resp.StatusCode, b, err}
	}()
	_, err = pw.Write([]byte(`{"items":[{"data_source":"timely/general","solution_str":"<answer>42</answer>",`))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return p.metric(client, "timeaware_http_inflight_requests") == 1 },
		20*time.Second, 5*time.Millisecond, "the server is reading the body")

	sigterm := time.Now()
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	// During the grace readiness fails and requests are still answered.
	require.Eventually(t, func() bool {
		resp, err := client.Get(p.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable
	}, grace, 5*time.Millisecond, "readiness fails within the grace")
	code, _ := getJSON(t, p.url+"/healthz")
	assert.Equal(t, http.StatusOK, code, "liveness holds")
	// After it, once the listen backlog is drained (no connection for
	// 100 ms: the probe waits longer than that between tries), new
	// connections are refused while the request in flight drains.
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(p.url, "http://"), time.Second)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 30*time.Second, 250*time.Millisecond, "the listener closes")
	assert.GreaterOrEqual(t, time.Since(sigterm), grace, "not before the grace ends")
	p.failIfExited(t)

	_, err = pw.Write([]byte(`"ground_truth":"42","extra_info":{"elapsed_s":1,"time_limit_s":2}}]}`))
	require.NoError(t, err)
	require.NoError(t, pw.Close())
	r := <-replies
	require.NoError(t, r.err)
	assert.Equal(t, 200, r.code, "%s", r.body)
	assert.Contains(t, string(r.body), `"acc":1`)

	select {
	case err := <-p.done:
		p.done <- err
		assert.NoError(t, err, "clean exit after draining\n%s", p.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("server did not exit after draining")
	}
	assert.Contains(t, p.stderr.String(), "draining")
}

// TestServeStartsOnDefaults: no config file, no secret: the service starts,
// warns that timers are process-local, and serves the registry.
func TestServeStartsOnDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	p := startServer(t)
	code, reg := getJSON(t, p.url+"/v1/rewards")
	require.Equal(t, 200, code)
	var names []string
	for _, r := range reg["rewards"].([]any) {
		names = append(names, r.(map[string]any)["data_source"].(string))
	}
	assert.Equal(t, []string{"timely/general", "timely/game", "timely/ml", "tictoc/decision", "timepuzzles", "traveler", "negotiation",
		"length/lcpo_exact", "length/lcpo_max", "length/thinkprune", "length/dapo", "length/cosine", "length/elastic", "length/anytime", "length/kimi", "length/shorterbetter", "length/alp",
		"timeqa", "tempreason", "tram", "test_of_time"}, names)
	assert.Contains(t, p.stderr.String(), "timers.secret is not set")
}

func TestServeUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad timeout", []string{"serve"}, map[string]string{"TIMEAWARE_SERVE_REQUEST_TIMEOUT": "soon"}, "TIMEAWARE_SERVE_REQUEST_TIMEOUT=soon: want a positive duration"},
		{"short secret", []string{"serve"}, map[string]string{"TIMEAWARE_TIMERS_SECRET": "short"}, "at least 16 bytes"},
		{"bad utilization", []string{"serve"}, map[string]string{"TIMEAWARE_REWARDS_TIMELY_UTILIZATION": "cubic"}, "TIMEAWARE_REWARDS_TIMELY_UTILIZATION=cubic: not sin, linear or step"},
		{"bad step table", []string{"serve"}, map[string]string{"TIMEAWARE_REWARDS_TIMELY_STEP_TABLE": "0.1,x"}, "TIMEAWARE_REWARDS_TIMELY_STEP_TABLE=0.1,x: entry 2"},
		{"bad openrlhf source", []string{"serve"}, map[string]string{"TIMEAWARE_SERVE_OPENRLHF_DATA_SOURCE": "gsm8k"}, "gsm8k"},
		{"bad pattern", []string{"serve"}, map[string]string{"TIMEAWARE_REWARDS_TICTOC_TOOL_CALL_PATTERNS": "("}, "TIMEAWARE_REWARDS_TICTOC_TOOL_CALL_PATTERNS=(: entry 1: error parsing regexp"},
		{"bad anytime prior", []string{"serve"}, map[string]string{"TIMEAWARE_REWARDS_LENGTH_ANYTIME_PRIOR": "flat"}, "TIMEAWARE_REWARDS_LENGTH_ANYTIME_PRIOR=flat: not uniform, linear or base"},
		{"zero thinkprune limit", []string{"serve"}, map[string]string{"TIMEAWARE_REWARDS_LENGTH_THINKPRUNE_LIMIT": "0"}, "TIMEAWARE_REWARDS_LENGTH_THINKPRUNE_LIMIT=0: 0: a budget must be at least 1 token"},
		{"bad addr", []string{"serve", "--addr", "256.0.0.1:99999"}, nil, "--addr"},
		{"stray argument", []string{"serve", "now"}, nil, `"timeaware serve" takes no arguments; got "now"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runCLI(t, tc.args...)
			assert.Equal(t, exitUsage, code, stderr)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestServeBeyondLoopbackNeedsAToken: binding every interface without a
// token is refused, naming the flag and the way out; with a token, or the
// explicit opt-out, the service starts.
func TestServeBeyondLoopbackNeedsAToken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	out, err := exec.Command(serverBinary(t), "serve", "--addr", "0.0.0.0:0").CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, string(out), "--addr 0.0.0.0:0: listening beyond loopback needs serve.token")
	assert.Contains(t, string(out), "--allow-no-token")

	for _, tc := range []struct {
		name string
		args []string
		env  []string
	}{
		{"token", nil, []string{"TIMEAWARE_SERVE_TOKEN=tok"}},
		{"opt-out flag", []string{"--allow-no-token"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startServerArgs(t, tc.env, append([]string{"--addr", "0.0.0.0:0"}, tc.args...)...)
			host, _, err := net.SplitHostPort(p.addr)
			require.NoError(t, err)
			assert.True(t, net.ParseIP(host).IsUnspecified(), "the file holds the wildcard address bound: %s", p.addr)
		})
	}
}

// TestServeAddrFile: with --addr 127.0.0.1:0 the kernel picks the port; the
// file holds the bound address, the log names it, the service answers
// there, and the file is gone after a clean stop.
func TestServeAddrFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server process")
	}
	p := startServer(t)
	b, err := os.ReadFile(p.addrFile)
	require.NoError(t, err)
	assert.Equal(t, p.addr+"\n", string(b), "one line, host:port")
	host, port, err := net.SplitHostPort(p.addr)
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", host)
	assert.NotEqual(t, "0", port)
	// The log reaches the test through a pipe, after the service may
	// already answer: wait for it.
	require.Eventually(t, func() bool { return strings.Contains(p.stderr.String(), "msg=serving addr="+p.addr) }, 10*time.Second,
		5*time.Millisecond, "the log names the address: %s", p.stderr.String())
	entries, err := os.ReadDir(filepath.Dir(p.addrFile))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left beside it")

	require.NoError(t, p.stop(t))
	_, err = os.Stat(p.addrFile)
	assert.True(t, os.IsNotExist(err), "removed at exit: %v", err)
}

// TestServeAddrFileErrors: an address file that cannot be written is a
// usage error naming the flag and the path, given before the service
// serves; nothing is left behind.
func TestServeAddrFileErrors(t *testing.T) {
	tmp := t.TempDir()
	notDir := filepath.Join(tmp, "plain-file")
	require.NoError(t, os.WriteFile(notDir, []byte("x"), 0o644))
	aDir := filepath.Join(tmp, "a-directory")
	require.NoError(t, os.Mkdir(aDir, 0o755))
	tests := []struct {
		name string
		path string
		want string
	}{
		{"parent is a file", filepath.Join(notDir, "addr"), "not a directory"},
		{"path is a directory", aDir, aDir},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--addr-file", tc.path)
			assert.Equal(t, exitIO, code, stderr)
			assert.Contains(t, stderr, "--addr-file "+tc.path+": ")
			assert.Contains(t, stderr, tc.want)
			assert.NotContains(t, stderr, "msg=serving", "the service did not start")
		})
	}
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"a-directory", "plain-file"}, names, "no temporary file is left")
	entries, err = os.ReadDir(aDir)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestServeOnABusyPortSaysHowToGetAFreeOne: the port is taken, and the
// error says which flag to change and to what.
func TestServeOnABusyPortSaysHowToGetAFreeOne(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	addr := ln.Addr().String()
	code, _, stderr := runCLI(t, "serve", "--addr", addr)
	assert.Equal(t, exitUsage, code, stderr)
	// The port error alone: no warning about a service that never started
	// comes before it (timers.secret is not set here).
	assert.Equal(t, "timeaware: --addr "+addr+": the address is in use; --addr 127.0.0.1:0 takes a free port, and --addr-file FILE writes the one taken\n"+
		"Run 'timeaware serve --help' for usage.\n", stderr)

	t.Setenv("TIMEAWARE_SERVE_ADDR", addr)
	code, _, stderr = runCLI(t, "serve")
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "timeaware: TIMEAWARE_SERVE_ADDR="+addr+": the address is in use")
}

// TestRewardsKeysNameTheirSource: a reward setting that the rewards
// package refuses is reported where the user set it.
func TestRewardsKeysNameTheirSource(t *testing.T) {
	file := writeFile(t, filepath.Join(t.TempDir(), "r.yaml"), "rewards:\n  tictoc:\n    tool_call_patterns: ['(']\n")
	code, _, stderr := runCLI(t, "--config", file, "score", "--data-source", "timepuzzles", "--input", scorePuzzles)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "timeaware: --config "+file+": rewards.tictoc.tool_call_patterns (: ")

	t.Setenv("TIMEAWARE_REWARDS_TIMELY_LAMBDA", "inf")
	code, _, stderr = runCLI(t, "score", "--data-source", "timepuzzles", "--input", scorePuzzles)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "timeaware: TIMEAWARE_REWARDS_TIMELY_LAMBDA=inf: want a finite number")
}

// TestTimerKeysNameTheirSource: a timer store option that the timers
// package refuses is reported where the user set it, the secret unshown.
func TestTimerKeysNameTheirSource(t *testing.T) {
	t.Setenv("TIMEAWARE_TIMERS_SECRET", "too-short")
	code, _, stderr := runCLI(t, "score", "--data-source", "timepuzzles", "--input", scorePuzzles)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "timeaware: TIMEAWARE_TIMERS_SECRET: the secret must be at least 16 bytes\n")
	assert.NotContains(t, stderr, "too-short")

	unsetenv(t, "TIMEAWARE_TIMERS_SECRET")
	code, _, stderr = runCLI(t, "score", "--data-source", "timepuzzles", "--input", scorePuzzles)
	require.Equal(t, exitOK, code, stderr)
	t.Setenv("TIMEAWARE_TIMERS_DEFAULT_TTL", "48h")
	code, _, stderr = runCLI(t, "score", "--data-source", "timepuzzles", "--input", scorePuzzles)
	assert.Equal(t, exitUsage, code, stderr)
	assert.Contains(t, stderr, "timeaware: TIMEAWARE_TIMERS_DEFAULT_TTL=48h: exceeds timers.max_ttl (24h)\n")
}
