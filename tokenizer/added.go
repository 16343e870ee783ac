package tokenizer

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// addedToken is an entry of tokenizer.json's added_tokens.
type addedToken struct {
	ID         uint32 `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// addedSet finds added tokens in a text, leftmost first and the longest
// of those starting there, as tokenizers does before it normalizes.
type addedSet struct {
	// first holds the tries of the tokens by their first byte, so that
	// most bytes of a text are passed over with one load.
	first [256]*trieNode
	any   bool
}

type trieNode struct {
	next  map[byte]*trieNode
	token *addedToken // set where a token's content ends
}

// parseAdded sorts the added tokens into those matched on the text as
// given and those matched on the normalized text.
func parseAdded(tokens []addedToken) (raw, normalized *addedSet, err error) {
	raw, normalized = &addedSet{}, &addedSet{}
	for i := range tokens {
		t := &tokens[i]
		if t.Content == "" {
			return nil, nil, fmt.Errorf("added_tokens[%d] (id %d): no content", i, t.ID)
		}
		set := raw
		if t.Normalized {
			set = normalized
		}
		set.add(t)
	}
	return raw, normalized, nil
}

func (a *addedSet) add(t *addedToken) {
	a.any = true
	n := a.first[t.Content[0]]
	if n == nil {
		n = &trieNode{}
		a.first[t.Content[0]] = n
	}
	for i := 1; i < len(t.Content); i++ {
		c := t.Content[i]
		if n.next == nil {
			n.next = map[byte]*trieNode{}
		}
		child := n.next[c]
		if child == nil {
			child = &trieNode{}
			n.next[c] = child
		}
		n = child
	}
	if n.token == nil {
		n.token = t
	}
}

// longest is the longest token starting at s[i:] and its end, or nil.
func (a *addedSet) longest(s string, i int) (int, *addedToken) {
	var end int
	var tok *addedToken
	n := a.first[s[i]]
	if n == nil {
		return end, tok
	}
	if n.token != nil {
		end, tok = i+1, n.token
	}
	for j := i + 1; j < len(s) && n.next != nil; j++ {
		if n = n.next[s[j]]; n == nil {
			break
		}
		if n.token != nil {
			end, tok = j+1, n.token
		}
	}
	return end, tok
}

// each calls f with the pieces of s in order: each added token (token
// true, with the white space its lstrip and rstrip take) and the text
// between them; at is the piece's offset in s. A token marked single_word
// counts only where no word character touches it; when it does not,
// the search goes on after it, as tokenizers' does.
func (a *addedSet) each(s string, f func(piece string, at int, token bool) error) error {
	if !a.any {
		return f(s, 0, false)
	}
	from := 0 // the end of the last token taken
	for i := 0; i < len(s); {
		if a.first[s[i]] == nil {
			i++
			continue
		}
		end, tok := a.longest(s, i)
		if tok == nil {
			i++
			continue
		}
		start, stop := i, end
		i = end
		if tok.SingleWord && (wordBefore(s[:start]) || wordAfter(s[stop:])) {
			continue
		}
		if tok.LStrip {
			for start > from {
				r, size := utf8.DecodeLastRuneInString(s[:start])
				if !unicode.IsSpace(r) {
					break
				}
				start -= size
			}
		}
		if tok.RStrip {
			for stop < len(s) {
				r, size := utf8.DecodeRuneInString(s[stop:])
				if !unicode.IsSpace(r) {
					break
				}
				stop += size
			}
			i = stop
		}
		if start > from {
			if err := f(s[from:start], from, false); err != nil {
				return err
			}
		}
		if err := f(s[start:stop], start, true); err != nil {
			return err
		}
		from = stop
	}
	if from < len(s) {
		return f(s[from:], from, false)
	}
	return nil
}

// isWordChar is the word character of regular expressions' \w: a letter
// or other alphabetic, a mark, a decimal digit, a connector such as _, or
// a joiner.
func isWordChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.In(r, unicode.M, unicode.Nd, unicode.Nl, unicode.Pc, unicode.Other_Alphabetic) ||
		r == '\u200c' || r == '\u200d'
}

// wordBefore and wordAfter say a word character ends or starts s (an
// empty s decodes to utf8.RuneError, not one).
func wordBefore(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return isWordChar(r)
}

func wordAfter(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWordChar(r)
}
