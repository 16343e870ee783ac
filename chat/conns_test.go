package chat

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/timeaware/timeaware/conversation"
)

// TestConcurrencyReachedAndConnectionsReused: with the default HTTP client,
// a client of concurrency 24 has 24 requests in flight at once and never
// more, and later rounds of 24 reuse the first round's connections rather
// than opening new ones.
func TestConcurrencyReachedAndConnectionsReused(t *testing.T) {
	const concurrency, rounds = 24, 3
	var inFlight, most, conns, arrivals atomic.Int64
	// The first concurrency requests of a round wait until all of them are
	// in flight; the round's last request finds them gone.
	gates := make([]chan struct{}, rounds)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		a := arrivals.Add(1) - 1
		round, pos := a/(concurrency+1), a%(concurrency+1)
		if pos == concurrency-1 {
			close(gates[round])
		}
		if pos < concurrency {
			select {
			case <-gates[round]:
			case <-time.After(3 * time.Second):
			}
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)

	c, err := New(Options{URL: srv.URL, Model: "m", Concurrency: concurrency})
	require.NoError(t, err)
	assert.Equal(t, concurrency, c.Concurrency())
	for round := range rounds {
		var wg sync.WaitGroup
		errs := make([]error, concurrency+1)
		for i := range concurrency + 1 { // one more than fits: it waits for a slot
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = c.Complete(context.Background(), Request{
					Messages: []conversation.Message{{Role: "user", Content: text(fmt.Sprintf("round %d request %d", round, i))}},
				})
			}()
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
	}
	assert.EqualValues(t, concurrency, most.Load(), "requests in flight at once")
	assert.EqualValues(t, rounds*(concurrency+1), c.Stats().Requests)
	assert.EqualValues(t, concurrency, conns.Load(), "connections opened")
}

func TestConcurrencyDefault(t *testing.T) {
	c, err := New(Options{URL: "http://h/v1", Model: "m"})
	require.NoError(t, err)
	assert.Equal(t, DefaultConcurrency, c.Concurrency())
	c, err = New(Options{URL: "http://h/v1", Model: "m", Concurrency: 1})
	require.NoError(t, err)
	assert.Equal(t, 1, c.Concurrency())
}
