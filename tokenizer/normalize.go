package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// normalizer is one of tokenizer.json's normalizers.
type normalizer interface {
	normalize(s string) (string, error)
}

// normalizerTypes are the normalizers read, for the error that names the
// others.
const normalizerTypes = "Sequence, NFC, NFD, NFKC, NFKD, Lowercase, Strip, Prepend, Replace"

// parseNormalizer reads the normalizer at field; null is none.
func parseNormalizer(raw json.RawMessage, field string) (normalizer, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var head struct {
		Type        string            `json:"type"`
		Normalizers []json.RawMessage `json:"normalizers"`
		StripLeft   bool              `json:"strip_left"`
		StripRight  bool              `json:"strip_right"`
		Prepend     string            `json:"prepend"`
		Pattern     json.RawMessage   `json:"pattern"`
		Content     string            `json:"content"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, jsonscan.Explain(field, raw, err)
	}
	switch head.Type {
	case "Sequence":
		var seq sequenceNormalizer
		for i, r := range head.Normalizers {
			n, err := parseNormalizer(r, fmt.Sprintf("%s.normalizers[%d]", field, i))
			if err != nil {
				return nil, err
			}
			if n != nil {
				seq = append(seq, n)
			}
		}
		return seq, nil
	case "NFC":
		return unicodeForm{norm.NFC}, nil
	case "NFD":
		return unicodeForm{norm.NFD}, nil
	case "NFKC":
		return unicodeForm{norm.NFKC}, nil
	case "NFKD":
		return unicodeForm{norm.NFKD}, nil
	case "Lowercase":
		return lowercase{}, nil
	case "Strip":
		return strip{left: head.StripLeft, right: head.StripRight}, nil
	case "Prepend":
		return prepend(head.Prepend), nil
	case "Replace":
		p, err := parsePattern(head.Pattern, field+".pattern")
		if err != nil {
			return nil, err
		}
		return replace{p, head.Content}, nil
	case "":
		return nil, fmt.Errorf("%s: no type", field)
	}
	return nil, fmt.Errorf("%s: the %s normalizer is not read here (only %s): its count could differ from the tokenizer's", field, head.Type, normalizerTypes)
}

type sequenceNormalizer []normalizer

func (q sequenceNormalizer) normalize(s string) (string, error) {
	var err error
	for _, n := range q {
		if s, err = n.normalize(s); err != nil {
			return "", err
		}
	}
	return s, nil
}

type unicodeForm struct{ form norm.Form }

func (u unicodeForm) normalize(s string) (string, error) { return u.form.String(s), nil }

// lowercase lowers each character on its own, as Rust's char::to_lowercase
// does: İ becomes i with a combining dot, and a final sigma stays σ.
type lowercase struct{}

func (lowercase) normalize(s string) (string, error) {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == 'İ' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String(), nil
}

// strip removes white space (Unicode's White_Space) from either end.
type strip struct{ left, right bool }

func (st strip) normalize(s string) (string, error) {
	if st.left {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
	}
	if st.right {
		s = strings.TrimRightFunc(s, unicode.IsSpace)
	}
	return s, nil
}

// prepend puts its text before any text that is not empty.
type prepend string

func (p prepend) normalize(s string) (string, error) {
	if s == "" {
		return s, nil
	}
	return string(p) + s, nil
}

// replace puts content in place of every match of its pattern.
type replace struct {
	p       *pattern
	content string
}

func (r replace) normalize(s string) (string, error) {
	m, err := r.p.find(s)
	if err != nil || len(m) == 0 {
		return s, err
	}
	var b strings.Builder
	at := 0
	for _, x := range m {
		b.WriteString(s[at:x[0]])
		b.WriteString(r.content)
		at = x[1]
	}
	b.WriteString(s[at:])
	return b.String(), nil
}
