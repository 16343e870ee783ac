package verifier

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A request body is read before the request takes one of the MaxInflight
// slots, under three bounds, so that a hostile client can hold neither the
// slots nor the memory of others:
//
//   - its length: a Content-Length above MaxBodyBytes is refused before a
//     byte is read, and a chunked body is cut at MaxBodyBytes;
//   - its time: the whole body must arrive within BodyTimeout of the
//     headers, so a client that stalls mid-body frees its connection;
//   - memory: the buffer grows only as bytes arrive, and every growth, and
//     the decoding that follows, is reserved from a budget shared by all
//     requests (MemoryBudget); a request that does not fit gets 429 at once.
//
// Buffers come from the server's pool; large ones are not kept, so memory
// taken by one burst of large bodies is given back. A buffer from the pool
// may be larger than what is reserved for it: it is read only up to the
// reservation, which grows first.

const (
	// minBodyBuf is a body buffer's first size when the length is unknown;
	// firstBodyBuf caps the first size when it is announced.
	minBodyBuf   = 4 << 10
	firstBodyBuf = 64 << 10
	// maxPooledBody is the largest buffer the pool keeps.
	maxPooledBody = 4 << 20
	// decodeFactor is the memory reserved for decoding a body, as a multiple
	// of its length (the items' arena and structs, then the results).
	decodeFactor = 2
)

// newBodyPool is a server's pool of body buffers.
func newBodyPool() *sync.Pool {
	return &sync.Pool{New: func() any { return new(bytes.Buffer) }}
}

// memBudget is a non-blocking counting semaphore of bytes.
type memBudget struct {
	limit int64
	used  atomic.Int64
}

// take reserves n bytes for a request that then holds total, reporting
// whether they fit. A large request (holding more than a 64th of the
// budget) may take only while three quarters of the budget or less are in
// use: the last quarter is kept for small requests, so that a few clients
// sending large bodies slowly cannot shut everyone else out until their
// body deadlines pass.
func (b *memBudget) take(n, total int64) bool {
	limit := b.limit
	if total > b.limit/64 {
		limit = b.limit - b.limit/4
	}
	for {
		u := b.used.Load()
		if u+n > limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

func (b *memBudget) give(n int64) { b.used.Add(-n) }

var errMemory = &apiError{Status: http.StatusTooManyRequests, Code: "overloaded",
	Message: "the server's request memory is in use; retry shortly", RetryAfter: 1}

// requestBody is a body read into a pooled buffer, with the memory reserved
// for it; release gives both back.
type requestBody struct {
	s        *Server
	buf      *bytes.Buffer
	reserved int64
}

func (b *requestBody) reserve(n int64) error {
	if !b.s.mem.take(n, b.reserved+n) {
		b.s.metrics.shed.WithLabelValues("memory").Inc()
		return errMemory
	}
	b.reserved += n
	return nil
}

func (b *requestBody) release() {
	if b.buf != nil {
		if b.buf.Cap() <= maxPooledBody {
			b.buf.Reset()
			b.s.bodies.Put(b.buf)
		}
		b.buf = nil
	}
	b.s.mem.give(b.reserved)
	b.reserved = 0
}

// checkContentType accepts JSON bodies only (application/json or
// application/*+json), so that a web page cannot make a browser post to the
// service: the forms and plain text a page may send without a preflight
// are refused.
func checkContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")) {
		return nil
	}
	got := "none"
	if ct != "" {
		got = strconv.Quote(ct)
	}
	return &apiError{Status: http.StatusUnsupportedMediaType, Code: "unsupported_media_type", Field: "Content-Type",
		Message: "Content-Type: send application/json (got " + got + ")"}
}

// closeUnread closes the connection after the answer without reading the
// rest of the body: net/http would otherwise read up to 256 KiB of it
// before answering the next request, with no deadline. The read deadline
// ends that read at once; the connection then lingers (see linger), so
// that a client still sending reads the answer rather than a reset.
func closeUnread(w http.ResponseWriter, rc *http.ResponseController) {
	w.Header().Set("Connection", "close")
	_ = rc.SetReadDeadline(time.Now())
}

// readBody reads r's body within the limits above. The caller releases the
// result after the handler is done with the bytes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) (*requestBody, error) {
	rc := http.NewResponseController(w)
	if r.ContentLength > s.opts.MaxBodyBytes {
		closeUnread(w, rc)
		return nil, bodyTooLarge(s.opts.MaxBodyBytes)
	}
	// Errors here mean the connection cannot take deadlines (a test
	// recorder); the body is then read without one.
	_ = rc.SetReadDeadline(time.Now().Add(s.opts.BodyTimeout))

	// The room reserved for the bytes starts small and doubles as they
	// arrive, whatever length was announced: a client that announces much
	// and sends little holds little. The buffer holds at least the room,
	// and is read only up to it, however large the pool made it.
	b := &requestBody{s: s}
	room := int64(minBodyBuf)
	if r.ContentLength >= 0 {
		room = min(r.ContentLength+1, firstBodyBuf) // +1: room to see EOF
	}
	if err := b.reserve(room); err != nil {
		return nil, err
	}
	b.buf = s.bodies.Get().(*bytes.Buffer)
	b.buf.Reset()
	b.buf.Grow(int(room))
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	for {
		if int64(b.buf.Len()) == room {
			if err := b.reserve(room); err != nil {
				b.release()
				return nil, err
			}
			room *= 2
			b.buf.Grow(int(room) - b.buf.Len())
		}
		free := b.buf.AvailableBuffer()[:room-int64(b.buf.Len())]
		n, err := body.Read(free)
		b.buf.Write(free[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			closeUnread(w, rc)
			b.release()
			return nil, bodyReadError(err, s.opts)
		}
	}
	// The whole body is in; lift the deadline so that scoring, however
	// long, does not trip it (net/http watches the idle connection).
	_ = rc.SetReadDeadline(time.Time{})
	if b.buf.Len() == 0 {
		b.release()
		return nil, badRequest("empty_body", "body", "the request body is empty; send a JSON object")
	}
	// Decoding holds the items (their strings copied into one arena) and
	// then the results: reserve that too, so that the budget bounds what the
	// request costs, not only its bytes.
	if err := b.reserve(int64(b.buf.Len()) * decodeFactor); err != nil {
		b.release()
		return nil, err
	}
	return b, nil
}

func bodyTooLarge(limit int64) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large", Field: "body",
		Message: "request body exceeds " + strconv.FormatInt(limit, 10) + " bytes"}
}

// bodyReadError maps a failure to read a body: too long (413), too slow
// (408), or malformed on the wire, e.g. a bad chunked encoding (400).
func bodyReadError(err error, opts Options) error {
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		return bodyTooLarge(mbe.Limit)
	case errors.As(err, &ne) && ne.Timeout():
		return &apiError{Status: http.StatusRequestTimeout, Code: "body_timeout", Field: "body",
			Message: fmt.Sprintf("the request body did not arrive within %v", opts.BodyTimeout)}
	}
	return badRequest("malformed_body", "body", "the request body could not be read: "+err.Error())
}
