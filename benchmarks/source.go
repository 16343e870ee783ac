package benchmarks

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"
)

// gzipMagic starts a gzip stream, whatever the file's suffix (TimeQA's
// train files end in .json.gzip).
var gzipMagic = []byte{0x1f, 0x8b}

// utf8BOM is the byte order mark some files start with; it is skipped.
var utf8BOM = []byte("\ufeff")

// sourceBuffer is the size of a source's buffer; a longer JSON line is
// gathered in source.long.
const sourceBuffer = 64 << 10

// source is a released file as it is read: its text, gunzipped when it is
// a gzip stream and without a byte order mark, behind a buffer. It
// remembers the first error of reading the file and of gunzipping it: the
// JSON and CSV decoders report such an error as their own, and fail tells
// it from a record that does not parse.
type source struct {
	*bufio.Reader
	path       string
	file, gzip errReader
	// long gathers a line longer than the buffer.
	long []byte
}

// openSource starts reading the file at path from r: a gzip stream (its
// first two bytes say so) is read through gzip, and a byte order mark is
// skipped. Its error is the file's, naming path.
func openSource(r io.Reader, path string) (*source, error) {
	s := &source{path: path, file: errReader{r: r}}
	s.Reader = bufio.NewReaderSize(&s.file, sourceBuffer)
	if magic, _ := s.Peek(len(gzipMagic)); bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(s.Reader)
		if err != nil {
			s.gzip.err = err
			return nil, s.fail()
		}
		s.gzip.r = zr
		s.Reader = bufio.NewReaderSize(&s.gzip, sourceBuffer)
	}
	if bom, _ := s.Peek(len(utf8BOM)); bytes.Equal(bom, utf8BOM) {
		_, _ = s.Discard(len(utf8BOM)) // peeked: it is buffered
	}
	return s, s.fail()
}

// fail is the file's error when reading or gunzipping it failed, else
// nil. A decoder's error after such a failure is that failure.
func (s *source) fail() error {
	switch {
	case s.file.err != nil:
		return fmt.Errorf("%s: %w", s.path, s.file.err)
	case s.gzip.err != nil:
		return fmt.Errorf("%s: gzip: %w", s.path, s.gzip.err)
	}
	return nil
}

// readError is the file's error for err, an error reading it returned.
func (s *source) readError(err error) error {
	if ferr := s.fail(); ferr != nil {
		return ferr
	}
	return fmt.Errorf("%s: %w", s.path, err)
}

// skipSpace reads past the white space (as bytes.TrimSpace trims it) and
// returns the byte after it, unread; io.EOF when nothing else is left.
func (s *source) skipSpace() (byte, error) {
	for {
		r, _, err := s.ReadRune()
		if err != nil {
			return 0, err
		}
		if !unicode.IsSpace(r) {
			_ = s.UnreadRune() // the last read was ReadRune's
			next, err := s.Peek(1)
			if err != nil {
				return 0, err
			}
			return next[0], nil
		}
	}
}

// line is the next line, its end included, however long it is; it is
// valid until the next read. Its error is io.EOF after the last line.
func (s *source) line() ([]byte, error) {
	line, err := s.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.long = append(s.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.ReadSlice('\n')
			s.long = append(s.long, line...)
		}
		line = s.long
	}
	if errors.Is(err, io.EOF) && len(line) > 0 {
		err = nil
	}
	return line, err
}

// drain reads what is left of the file: what follows a JSON array is not
// read as records, but a gzip stream's checksum is at its end, and the
// manifest records the whole file.
func (s *source) drain() error {
	if _, err := io.Copy(io.Discard, s.Reader); err != nil {
		return s.readError(err)
	}
	return s.fail()
}

// maxHeld bounds the white space a spaceHolder holds back.
const maxHeld = sourceBuffer

// spaceHolder passes r on to a JSON decoder, less the white space at its
// end (as bytes.TrimSpace trims it): a run of white space is held back
// until something else follows it, and dropped at the end, so that an
// array cut short reads as cut short there (a tab would end a string, a
// space a literal, and the decoder does not skip a form feed or a no-break
// space). A run longer than maxHeld is passed on.
type spaceHolder struct {
	r    *bufio.Reader
	held []byte
	// passing says held is being passed on: something followed it.
	passing bool
}

// Read passes on the next bytes of r that are not held back.
func (h *spaceHolder) Read(p []byte) (int, error) {
	for len(p) > 0 {
		if h.passing {
			n := copy(p, h.held)
			h.held = h.held[:copy(h.held, h.held[n:])]
			h.passing = len(h.held) > 0
			return n, nil
		}
		next, err := h.r.Peek(utf8.UTFMax)
		if len(next) == 0 {
			return 0, err
		}
		r, size := utf8.DecodeRune(next)
		switch {
		case len(h.held) == 0 && !unicode.IsSpace(r):
			return h.pass(p, size), nil
		case unicode.IsSpace(r) && len(h.held) < maxHeld:
			h.held = append(h.held, next[:size]...)
			_, _ = h.r.Discard(size) // peeked: it is buffered
		default:
			h.passing = true
		}
	}
	return 0, nil
}

// pass copies to p the buffered bytes from the next rune, first bytes
// long and not white space, up to the next white space or a rune cut by
// the buffer's end, and returns how many.
func (h *spaceHolder) pass(p []byte, first int) int {
	buf, _ := h.r.Peek(min(h.r.Buffered(), len(p)))
	n := min(first, len(buf))
	for n < len(buf) {
		if c := buf[n]; c < utf8.RuneSelf && !unicode.IsSpace(rune(c)) {
			n++
			continue
		}
		if !utf8.FullRune(buf[n:]) {
			break
		}
		r, size := utf8.DecodeRune(buf[n:])
		if unicode.IsSpace(r) {
			break
		}
		n += size
	}
	copy(p, buf[:n])
	_, _ = h.r.Discard(n) // peeked: it is buffered
	return n
}

// errReader reads r and remembers its first error other than io.EOF;
// every read after it returns that error.
type errReader struct {
	r   io.Reader
	err error
}

// Read reads r until it fails.
func (e *errReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		e.err = err
	}
	return n, err
}
