package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dlclark/regexp2/v2"
)

// matchTimeout bounds one search of a Split or Replace pattern, so that a
// pattern that backtracks badly on some text fails that text rather than
// holding a request.
const matchTimeout = time.Second

// pattern is the "pattern" of a Split pre-tokenizer or a Replace
// normalizer: a literal {"String": …} or a regular expression
// {"Regex": …}.
type pattern struct {
	literal string
	re      *regexp2.Regexp
	// scan, when set, finds the matches of re without it (scan.go).
	scan func(string) [][2]int
}

func parsePattern(raw json.RawMessage, field string) (*pattern, error) {
	var p struct {
		String *string `json:"String"`
		Regex  *string `json:"Regex"`
	}
	if err := json.Unmarshal(raw, &p); err != nil || (p.String == nil) == (p.Regex == nil) {
		return nil, fmt.Errorf("%s: want {\"String\": …} or {\"Regex\": …}", field)
	}
	if p.String != nil {
		return &pattern{literal: *p.String}, nil
	}
	if scan, ok := scanners[*p.Regex]; ok {
		return &pattern{scan: scan}, nil
	}
	re, err := regexp2.Compile(*p.Regex)
	if err != nil {
		return nil, fmt.Errorf("%s: the regular expression %q: %w", field, *p.Regex, err)
	}
	re.MatchTimeout = matchTimeout
	return &pattern{re: re}, nil
}

// errPattern is the error of a pattern that could not finish on a text.
var errPattern = errors.New("a pattern of the tokenizer could not finish on this text")

// find returns the byte ranges [start, end) of the pattern's matches in s,
// left to right and not overlapping. An empty literal matches nothing.
func (p *pattern) find(s string) ([][2]int, error) {
	if p.scan != nil {
		return p.scan(s), nil
	}
	var out [][2]int
	if p.re == nil {
		if p.literal == "" {
			return nil, nil
		}
		for at := 0; ; {
			i := strings.Index(s[at:], p.literal)
			if i < 0 {
				return out, nil
			}
			out = append(out, [2]int{at + i, at + i + len(p.literal)})
			at += i + len(p.literal)
		}
	}
	idx, err := p.re.FindAllStringIndex(s, -1)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errPattern, err)
	}
	for _, m := range idx {
		out = append(out, [2]int{m[0], m[1]})
	}
	return out, nil
}
