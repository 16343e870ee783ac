package verifier

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
)

// lockedBuffer is a buffer the service's goroutines may log to.
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

// runOptions are options Run accepts, on a free loopback port, with the
// process's memory limit kept as it was after the test.
func runOptions(t *testing.T) RunOptions {
	t.Helper()
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	store, err := timers.New(timers.Options{Secret: timers.RandomSecret()})
	require.NoError(t, err)
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), store)
	require.NoError(t, err)
	return RunOptions{Options: Options{Scorer: scorer, Timers: store}, Addr: "127.0.0.1:0", MemoryLimit: 1 << 30}
}

// TestRunServesUntilCancelled: the address file names the bound port,
// the service answers there, the memory limit is set, and a cancelled ctx
// stops it cleanly and removes the file.
func TestRunServesUntilCancelled(t *testing.T) {
	opt := runOptions(t)
	var log lockedBuffer
	opt.Logger = slog.New(slog.NewTextHandler(&log, nil))
	opt.AddrFile = filepath.Join(t.TempDir(), "serve.addr")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opt) }()
	var addr string
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(opt.AddrFile)
		addr = strings.TrimSuffix(string(b), "\n")
		return err == nil
	}, 10*time.Second, 5*time.Millisecond)
	resp, err := http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, int64(1<<30-MemoryReserve(1<<30)), debug.SetMemoryLimit(-1))
	cancel()
	require.NoError(t, <-done)
	assert.NoFileExists(t, opt.AddrFile)
	assert.Contains(t, log.String(), "request_budget_bytes=536870912", "a budget of 0 is half the limit")
	assert.Contains(t, log.String(), "msg=served")
}

// TestRunLeavesAnotherProcesssAddressFile: a file rewritten by another
// process since the start is not removed.
func TestRunLeavesAnotherProcesssAddressFile(t *testing.T) {
	opt := runOptions(t)
	opt.AddrFile = filepath.Join(t.TempDir(), "serve.addr")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, opt) }()
	require.Eventually(t, func() bool { _, err := os.Stat(opt.AddrFile); return err == nil }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, os.WriteFile(opt.AddrFile, []byte("127.0.0.1:1\n"), 0o644))
	cancel()
	require.NoError(t, <-done)
	assert.FileExists(t, opt.AddrFile)
}

func TestRunErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o644))
	for _, tc := range []struct {
		name  string
		edit  func(*RunOptions)
		field string
		is    error
	}{
		{"address in use", func(o *RunOptions) { o.Addr = busy.Addr().String() }, "Addr", syscall.EADDRINUSE},
		{"bad address", func(o *RunOptions) { o.Addr = "256.0.0.1:99999" }, "Addr", nil},
		{"beyond loopback without a token", func(o *RunOptions) { o.Addr = "0.0.0.0:0" }, "Addr", ErrNoToken},
		{"address file under a file", func(o *RunOptions) { o.AddrFile = filepath.Join(notDir, "addr") }, "AddrFile", nil},
		{"token with a space", func(o *RunOptions) { o.Token = " tok" }, "Token", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := runOptions(t)
			tc.edit(&opt)
			err := Run(context.Background(), opt)
			var oe *OptionError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, tc.field, oe.Field)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			if tc.field == "AddrFile" {
				assert.ErrorAs(t, err, new(*fs.PathError))
				assert.ErrorContains(t, err, notDir+" is not a directory")
			}
			assert.False(t, errors.As(err, new(*ServeError)))
		})
	}
	t.Run("beyond loopback with a token or the opt-out", func(t *testing.T) {
		for _, edit := range []func(*RunOptions){func(o *RunOptions) { o.Token = "tok" }, func(o *RunOptions) { o.AllowNoToken = true }} {
			opt := runOptions(t)
			opt.Addr = "0.0.0.0:0"
			edit(&opt)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			assert.NoError(t, Run(ctx, opt))
		}
	})
	t.Run("opponent endpoint", func(t *testing.T) {
		opt := runOptions(t)
		opt.Opponent = chat.Options{Name: "opponent", URL: "ftp://h", Model: "m"}
		err := Run(context.Background(), opt)
		assert.ErrorContains(t, err, "opponent: ")
		assert.False(t, errors.As(err, new(*OptionError)))
	})
	t.Run("budget above the limit", func(t *testing.T) {
		opt := runOptions(t)
		opt.MemoryBudget = 2 << 30
		var me *MemoryError
		require.ErrorAs(t, Run(context.Background(), opt), &me)
		assert.Equal(t, MemoryError{Budget: 2 << 30, Limit: 1 << 30}, *me)
	})
	t.Run("GOMEMLIMIT wins", func(t *testing.T) {
		opt := runOptions(t)
		t.Setenv("GOMEMLIMIT", "256MiB")
		debug.SetMemoryLimit(256 << 20) // what the runtime parsed at start
		opt.MemoryBudget = 512 << 20
		var me *MemoryError
		require.ErrorAs(t, Run(context.Background(), opt), &me)
		assert.Equal(t, int64(256<<20), me.Limit)
	})
}

// TestRunChoosesTheMemoryLimit: a limit of 0 is the cgroup's or the
// machine's, and the budget half of it.
func TestRunChoosesTheMemoryLimit(t *testing.T) {
	opt := runOptions(t)
	opt.MemoryLimit = 0
	var log lockedBuffer
	opt.Logger = slog.New(slog.NewTextHandler(&log, nil))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, Run(ctx, opt))
	m := regexp.MustCompile(`msg=memory limit_bytes=(\d+) runtime_limit_bytes=(\d+) request_budget_bytes=(\d+)`).FindStringSubmatch(log.String())
	require.NotNil(t, m, log.String())
	limit, _ := strconv.ParseInt(m[1], 10, 64)
	runtimeLimit, _ := strconv.ParseInt(m[2], 10, 64)
	budget, _ := strconv.ParseInt(m[3], 10, 64)
	assert.Positive(t, limit)
	assert.Equal(t, limit-MemoryReserve(limit), runtimeLimit)
	assert.Equal(t, limit/2, budget)
}

func TestRunErrorTexts(t *testing.T) {
	assert.EqualError(t, &MemoryError{Budget: 3, Limit: 2}, "verifier: memory budget 3: exceeds the memory limit 2")
	err := &ServeError{Err: context.DeadlineExceeded}
	assert.EqualError(t, err, "verifier: serve: context deadline exceeded")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestMemoryReserveKeepsResidentMemoryUnderTheLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct{ limit, runtimeLimit int64 }{
		{512 * mib, 448 * mib},   // the 64 MiB floor
		{256 * mib, 192 * mib},   // the attack suite's bound
		{1024 * mib, 896 * mib},  // an eighth
		{8192 * mib, 7936 * mib}, // the 256 MiB ceiling
		{128 * mib, 96 * mib},    // never more than a quarter
		{100 * 1024 * mib, 102144 * mib},
	} {
		assert.Equal(t, tc.runtimeLimit, tc.limit-MemoryReserve(tc.limit), "limit %d MiB", tc.limit/mib)
	}
}

func TestSampleRollout(t *testing.T) {
	ro, err := SampleRollout(context.Background(), "test")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(ro.URL, "http://127.0.0.1:"), ro.URL)
	assert.Equal(t, "demo-rollout", ro.ID)
	assert.NotEmpty(t, ro.Duration)
	require.Len(t, ro.Scores, 4)
	var answers []string
	var right []bool
	for _, s := range ro.Scores {
		answers, right = append(answers, s.Answer), append(right, s.Right)
		assert.Equal(t, 10.0, s.TimeLimitS)
	}
	assert.Equal(t, []string{`\frac{3}{4}`, "0.75", "0.5", "75%"}, answers)
	assert.Equal(t, []bool{true, true, false, true}, right)
	assert.Greater(t, ro.Scores[0].ElapsedS, 2.0, "120 ms at speed factor 25")
	assert.Equal(t, []float64{9.5, 4, 12}, []float64{ro.Scores[1].ElapsedS, ro.Scores[2].ElapsedS, ro.Scores[3].ElapsedS})
	assert.Zero(t, ro.Scores[3].Score, "late")
	assert.Greater(t, ro.Scores[1].Score, ro.Scores[2].Score, "right beats wrong")
	_, err = http.Get(ro.URL + "/healthz")
	assert.Error(t, err, "the service has stopped")
}
