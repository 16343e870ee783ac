package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/timers"
	"github.com/timeaware/timeaware/verifier"
)

// The churn mode against the service with room for 200 timers: 700
// creations with a 2 s ttl fill the index, the refusals match the
// service's count, and every probe reads before its ttl and is refused
// after it.
func TestChurnAgainstTheService(t *testing.T) {
	store, err := timers.New(timers.Options{Secret: []byte("loadgen test secret, 32 bytes.."), MaxRollouts: 200})
	require.NoError(t, err)
	scorer, err := rewards.NewScorer(rewards.DefaultConfig(), store)
	require.NoError(t, err)
	srv, err := verifier.New(verifier.Options{Scorer: scorer, Timers: store})
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	c := config{url: ts.URL, client: "raw", timeout: 5 * time.Second, clients: 4, creations: 700, ttl: 2 * time.Second,
		idBytes: "36,256", probeEvery: 50}
	s, err := churn(c)
	require.NoError(t, err)
	assert.Equal(t, int64(700), s.Created+s.Refused, "every creation is created or refused")
	assert.Positive(t, s.Refused, "the index filled")
	assert.Equal(t, float64(s.Refused), s.RefusedByServer)
	assert.Positive(t, s.Probes)
	assert.Zero(t, s.ProbesLost)
	assert.Zero(t, s.ProbesAlive)
	assert.LessOrEqual(t, s.HeldMax, 200.0)
	assert.Equal(t, []int{36, 256}, s.IDBytes)
}

// With -replicas, the creations spread over two services that share the
// timers' secret; one stops taking connections partway, and its clients'
// creations move to the other, nothing lost; the probes read on either.
func TestChurnOverReplicas(t *testing.T) {
	secret := []byte("loadgen test secret, 32 bytes..")
	handler := func() http.Handler {
		store, err := timers.New(timers.Options{Secret: secret})
		require.NoError(t, err)
		scorer, err := rewards.NewScorer(rewards.DefaultConfig(), store)
		require.NoError(t, err)
		srv, err := verifier.New(verifier.Options{Scorer: scorer, Timers: store})
		require.NoError(t, err)
		return srv.Handler()
	}
	a := httptest.NewServer(handler())
	defer a.Close()
	// b stops (its connections closed, its port refusing) once it has
	// made 500 timers, with most of the run still to come.
	var (
		made atomic.Int64
		once sync.Once
		b    *httptest.Server
	)
	hb := handler()
	b = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hb.ServeHTTP(w, r)
		if r.URL.Path == "/v1/timers" && made.Add(1) == 500 {
			go once.Do(b.Close)
		}
	}))
	defer once.Do(b.Close)
	c := config{url: a.URL, replicas: a.URL + "," + b.URL, client: "raw", timeout: 5 * time.Second, clients: 4,
		creations: 20000, ttl: 2 * time.Second, idBytes: "36", probeEvery: 500}
	s, err := churn(c)
	require.NoError(t, err)
	assert.Equal(t, int64(20000), s.Created, "every creation made on one replica or the other")
	assert.Zero(t, s.Other)
	assert.Equal(t, 2, s.Replicas)
	assert.Less(t, made.Load(), int64(10000), "b stopped before its half was made")
	assert.Positive(t, s.Moved+s.Resent, "the clients of the stopped replica went to the other")
	assert.Zero(t, s.ProbesLost)
	assert.Zero(t, s.ProbesAlive)
}

// A service that forgets its timers fails the run: every probe is lost.
func TestChurnFindsLostTimers(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/timers":
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"timer":"t"}`))
		case "/v1/tools/get_duration":
			w.WriteHeader(http.StatusGone)
		}
	}))
	defer ts.Close()
	c := config{url: ts.URL, client: "raw", timeout: 5 * time.Second, clients: 2, creations: 20, ttl: 2 * time.Second,
		idBytes: "64", probeEvery: 10}
	s, err := churn(c)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "want 200")
	assert.Equal(t, int64(2), s.Probes)
	assert.Equal(t, int64(2), s.ProbesLost)
	assert.Zero(t, s.ProbesAlive)
}

// The churn mode refuses bad flags before it sends anything.
func TestChurnFlags(t *testing.T) {
	good := config{url: "http://127.0.0.1:1", client: "raw", clients: 1, creations: 1, ttl: 2 * time.Second, idBytes: "36", probeEvery: 1}
	for _, tc := range []struct {
		name string
		edit func(*config)
		want string
	}{
		{"net/http client", func(c *config) { c.client = "std" }, "only -client raw"},
		{"ttl under 2 s", func(c *config) { c.ttl = time.Second }, "-ttl at least 2s"},
		{"no creations", func(c *config) { c.creations = 0 }, "-creations"},
		{"id too short", func(c *config) { c.idBytes = "8" }, "-id-bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.edit(&c)
			s, err := churn(c)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Empty(t, s.Mode, "nothing ran")
		})
	}
}

func TestParseIDBytes(t *testing.T) {
	got, err := parseIDBytes("36, 256")
	require.NoError(t, err)
	assert.Equal(t, []int{36, 256}, got)
	for _, bad := range []string{"", "10", "36,x", "2000"} {
		_, err := parseIDBytes(bad)
		assert.Error(t, err, bad)
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "-id-bytes"), err.Error())
		}
	}
}
