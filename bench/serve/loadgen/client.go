package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Two clients send the same pre-encoded requests over keep-alive
// connections, one request in flight per connection, as a trainer's HTTP
// client would:
//
//   - raw (the default) writes the whole request, headers included, that
//     was built before the clock started, and reads the response by its
//     Content-Length: on a 2-core machine shared with the server, the load
//     generator must cost little, and net/http's client costs about as much
//     CPU per small request as the server does to answer it;
//   - std is net/http's client, for comparison.

// request is one pre-encoded request.
type request struct {
	path string
	body []byte
	raw  []byte // the full HTTP/1.1 request, for the raw client
}

func newRequest(c config, path string, body []byte) (*request, error) {
	u, err := url.Parse(c.url)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(body) + 256)
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", path, u.Host, len(body))
	if c.token != "" {
		fmt.Fprintf(&b, "Authorization: Bearer %s\r\n", c.token)
	}
	b.WriteString("\r\n")
	b.Write(body)
	return &request{path: path, body: body, raw: b.Bytes()}, nil
}

// doer sends requests on one connection (raw) or one shared pool (std).
type doer interface {
	do(r *request) (status int, body []byte, err error)
	// retryAfter is the last response's Retry-After, in delta-seconds
	// (the form the service sends), if it had one.
	retryAfter() (time.Duration, bool)
}

// parseRetryAfter reads a Retry-After value in delta-seconds.
func parseRetryAfter(v string) (time.Duration, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

func newDoer(c config, std *http.Client) (doer, error) {
	switch c.client {
	case "std":
		return &stdDoer{cl: std, base: c.url, token: c.token}, nil
	case "raw":
		u, err := url.Parse(c.url)
		if err != nil {
			return nil, err
		}
		if u.Scheme != "http" {
			return nil, fmt.Errorf("-client raw speaks plain HTTP only, not %s", u.Scheme)
		}
		return &rawDoer{addr: u.Host, timeout: c.timeout}, nil
	}
	return nil, fmt.Errorf("-client %q: want raw or std", c.client)
}

func newStdClient(c config) *http.Client {
	tr := &http.Transport{
		Proxy:               nil, // loopback: never through an http_proxy from the environment
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2 * max(c.clients, 1),
		MaxIdleConnsPerHost: 2 * max(c.clients, 1),
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: c.timeout}
}

type stdDoer struct {
	cl    *http.Client
	base  string
	token string
	buf   bytes.Buffer
	retry string // the last response's Retry-After
}

func (p *stdDoer) retryAfter() (time.Duration, bool) { return parseRetryAfter(p.retry) }

func (p *stdDoer) do(r *request) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, p.base+r.path, bytes.NewReader(r.body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := p.cl.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	p.retry = resp.Header.Get("Retry-After")
	p.buf.Reset()
	if _, err := p.buf.ReadFrom(resp.Body); err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, p.buf.Bytes(), nil
}

type rawDoer struct {
	addr    string
	timeout time.Duration
	conn    net.Conn
	br      *bufio.Reader
	body    []byte
	used    bool // the connection has answered a request
	retry   time.Duration
	retryOK bool // the last response had a Retry-After, retry
	// once: never send a request again on a fresh connection when a kept-
	// alive one fails, so that every failure is seen (-mode sigterm).
	once bool
	// resent counts the requests sent again on a fresh connection.
	resent int64
}

func (p *rawDoer) retryAfter() (time.Duration, bool) { return p.retry, p.retryOK }

func (p *rawDoer) close() {
	if p.conn != nil {
		p.conn.Close()
		p.conn, p.br, p.used = nil, nil, false
	}
}

func (p *rawDoer) do(r *request) (int, []byte, error) {
	status, body, err := p.try(r)
	if err != nil && p.used && !p.once {
		// A kept-alive connection the server closed meanwhile: retry once
		// on a fresh one.
		p.close()
		p.resent++
		status, body, err = p.try(r)
	}
	if err != nil {
		p.close()
	}
	return status, body, err
}

// unsent reports whether err is a connection that failed before the
// request was written (refused, or its handshake never completed): the
// server never saw the request, and it may go elsewhere.
func unsent(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// dropped reports whether the server has closed the kept-alive
// connection (or sent something unasked), looking without waiting, as
// Python's urllib3 does before it sends on a pooled connection.
func (p *rawDoer) dropped() bool {
	if p.br.Buffered() > 0 {
		return true
	}
	sc, ok := p.conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	var b [1]byte
	_ = raw.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = n > 0 || (n == 0 && err == nil) || (err != nil && err != syscall.EAGAIN)
		return true
	})
	return gone
}

func (p *rawDoer) try(r *request) (int, []byte, error) {
	if p.conn == nil {
		conn, err := net.DialTimeout("tcp", p.addr, 5*time.Second)
		if err != nil {
			return 0, nil, err
		}
		p.conn, p.br = conn, bufio.NewReaderSize(conn, 64<<10)
	}
	if p.timeout > 0 {
		p.conn.SetDeadline(time.Now().Add(p.timeout))
	}
	if _, err := p.conn.Write(r.raw); err != nil {
		return 0, nil, err
	}
	status, closeAfter, err := p.readResponse()
	if err != nil {
		return status, nil, err
	}
	p.used = true
	if closeAfter {
		p.close()
	}
	return status, p.body, nil
}

var errMalformed = errors.New("malformed HTTP response")

// readResponse reads one response into p.body.
func (p *rawDoer) readResponse() (status int, closeAfter bool, err error) {
	p.retry, p.retryOK = 0, false
	line, err := p.br.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	length, chunked := -1, false
	for {
		line, err = p.br.ReadSlice('\n')
		if err != nil {
			return status, false, err
		}
		h := bytes.TrimRight(line, "\r\n")
		if len(h) == 0 {
			break
		}
		k, v, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return status, false, fmt.Errorf("%w: header %q", errMalformed, h)
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(v)); err != nil || length < 0 {
				return status, false, fmt.Errorf("%w: Content-Length %q", errMalformed, v)
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("Connection")):
			closeAfter = bytes.EqualFold(v, []byte("close"))
		case bytes.EqualFold(k, []byte("Retry-After")):
			p.retry, p.retryOK = parseRetryAfter(string(v))
		}
	}
	switch {
	case chunked:
		p.body, err = readAllInto(p.body[:0], httputil.NewChunkedReader(p.br))
		if err == nil {
			// Trailer section: read up to the empty line.
			for {
				line, err = p.br.ReadSlice('\n')
				if err != nil || len(bytes.TrimRight(line, "\r\n")) == 0 {
					break
				}
			}
		}
	case length >= 0:
		if cap(p.body) < length {
			p.body = make([]byte, length, length+length/4)
		}
		p.body = p.body[:length]
		_, err = io.ReadFull(p.br, p.body)
	default:
		p.body, err = readAllInto(p.body[:0], p.br)
		closeAfter = true
	}
	return status, closeAfter, err
}

func readAllInto(dst []byte, r io.Reader) ([]byte, error) {
	b := bytes.NewBuffer(dst)
	_, err := b.ReadFrom(r)
	return b.Bytes(), err
}
