package jsonscan

import (
	"bufio"
	"bytes"
	"io"
)

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// LineReader reads the lines of a JSONL file: a UTF-8 byte order mark at
// its start is skipped, lines may be of any length, and the last may lack
// its newline.
type LineReader struct {
	br   *bufio.Reader
	long []byte // a line longer than br's buffer
	line int
	bom  bool
}

// NewLineReader reads lines from r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next line, with its newline, valid until the next call,
// and its 1-based number (on an error, the number of the line it stopped
// in); io.EOF after the last.
func (l *LineReader) Next() ([]byte, int, error) {
	if !l.bom {
		l.bom = true
		if b, _ := l.br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
			l.br.Discard(len(utf8BOM))
		}
	}
	b, err := l.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = l.br.ReadSlice('\n')
			l.long = append(l.long, b...)
		}
		b = l.long
	}
	if len(b) > 0 && (err == nil || err == io.EOF) {
		l.line++
		return b, l.line, nil // io.EOF: a last line without a newline
	}
	if err == io.EOF {
		return nil, l.line, io.EOF
	}
	return nil, l.line + 1, err
}
