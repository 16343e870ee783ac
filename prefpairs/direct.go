package prefpairs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/jsonscan"
)

// DirectAnswers holds direct-reply texts from a side file, keyed by id and
// optionally by elapse level. A text given for a specific level wins over one
// given for the whole trajectory.
type DirectAnswers struct {
	byKey map[SampleKey]string
	byID  map[string]string
}

// Len is the number of entries read.
func (d *DirectAnswers) Len() int {
	if d == nil {
		return 0
	}
	return len(d.byKey) + len(d.byID)
}

// Lookup returns the text for a sample.
func (d *DirectAnswers) Lookup(k SampleKey) (string, bool) {
	if d == nil {
		return "", false
	}
	if s, ok := d.byKey[k]; ok {
		return s, true
	}
	s, ok := d.byID[k.ID]
	return s, ok
}

// ReadDirectAnswers reads a JSONL side file of
// {"id": ..., "elapse": k (optional), "direct_answer": "..."}. Empty texts
// and repeated entries are errors: a direct reply is never blank, and two
// texts for one sample would make the output depend on file order.
func ReadDirectAnswers(r io.Reader, source string) (*DirectAnswers, error) {
	d := &DirectAnswers{byKey: map[SampleKey]string{}, byID: map[string]string{}}
	br := bufio.NewReaderSize(r, 1<<20)
	seen := map[SampleKey]int{}
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: line %d: %w", source, line, err)
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			if err := d.add(t, source, line, seen); err != nil {
				return nil, err
			}
		}
		if err == io.EOF {
			return d, nil
		}
	}
}

func (d *DirectAnswers) add(b []byte, source string, line int, seen map[SampleKey]int) error {
	var rec struct {
		ID           *string         `json:"id"`
		Elapse       json.RawMessage `json:"elapse"`
		DirectAnswer *string         `json:"direct_answer"`
	}
	where := fmt.Sprintf("%s: line %d", source, line)
	if err := json.Unmarshal(b, &rec); err != nil {
		return fmt.Errorf("%s: %w", where, jsonscan.Explain("", b, err))
	}
	if rec.ID == nil || strings.TrimSpace(*rec.ID) == "" {
		return fmt.Errorf("%s: id: missing or empty", where)
	}
	where += " (id " + *rec.ID + ")"
	elapse := -1
	if len(rec.Elapse) > 0 && string(rec.Elapse) != "null" {
		if err := json.Unmarshal(rec.Elapse, &elapse); err != nil || elapse < 0 || elapse >= conversation.NumElapse {
			return fmt.Errorf("%s: elapse: %s is not 0, 1 or 2", where, rec.Elapse)
		}
	}
	if rec.DirectAnswer == nil || strings.TrimSpace(*rec.DirectAnswer) == "" {
		return fmt.Errorf("%s: direct_answer: missing or empty", where)
	}
	k := SampleKey{ID: *rec.ID, Elapse: elapse}
	if prev, ok := seen[k]; ok {
		return fmt.Errorf("%s: duplicate entry (first given on line %d)", where, prev)
	}
	seen[k] = line
	if elapse < 0 {
		d.byID[k.ID] = *rec.DirectAnswer
	} else {
		d.byKey[k] = *rec.DirectAnswer
	}
	return nil
}

// ErrMissingDirect is wrapped by Build's error when samples have no direct
// reply from any source.
var ErrMissingDirect = errors.New("no direct answer")
