package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// router spreads connections over replicas (-replicas, a comma-separated
// list of base URLs; default -url) as a Kubernetes Service does: it reads
// each replica's /readyz every 250 ms, as a readiness probe does, and a
// client that opens a connection opens it to the first ready replica from
// its own; a connection already open stays where it is until the server
// closes it. A request whose connection is refused before it is written
// goes to the next ready replica (moved).
type router struct {
	urls  []string
	addrs []string
	ready []atomic.Bool
	moved atomic.Int64
}

func newRouter(c config) (*router, error) {
	urls := []string{c.url}
	if c.replicas != "" {
		urls = strings.Split(c.replicas, ",")
	}
	rt := &router{urls: urls, addrs: make([]string, len(urls)), ready: make([]atomic.Bool, len(urls))}
	for i, r := range urls {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("-replicas %q: want http://host:port base URLs separated by commas", c.replicas)
		}
		rt.addrs[i] = u.Host
		rt.ready[i].Store(true)
	}
	return rt, nil
}

// watch reads the replicas' readiness every 250 ms, calling tick after
// each round, until stop is closed; it closes ended when it returns.
func (rt *router) watch(stop <-chan struct{}, ended chan<- struct{}, tick func()) {
	defer close(ended)
	probe := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}, Timeout: 200 * time.Millisecond}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		for i, r := range rt.urls {
			resp, err := probe.Get(r + "/readyz")
			ok := err == nil && resp.StatusCode == http.StatusOK
			if err == nil {
				resp.Body.Close()
			}
			rt.ready[i].Store(ok)
		}
		if tick != nil {
			tick()
		}
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

// pick is the first ready replica from from, or from when none is.
func (rt *router) pick(from int) int {
	for k := range rt.addrs {
		if i := (from + k) % len(rt.addrs); rt.ready[i].Load() {
			return i
		}
	}
	return from
}

// do sends r on p; a p without a connection opens one to the first ready
// replica from home, and a request refused before it was written moves on
// to the next replica, twice round them at most.
func (rt *router) do(p *rawDoer, r *request, home int) (int, []byte, error) {
	at := home
	for tries := 0; ; tries++ {
		if p.conn == nil {
			at = rt.pick(at)
			p.addr = rt.addrs[at]
		}
		status, body, err := p.do(r)
		if err == nil || !unsent(err) || tries >= 2*len(rt.addrs) {
			return status, body, err
		}
		rt.moved.Add(1)
		at = (at + 1) % len(rt.addrs)
	}
}
