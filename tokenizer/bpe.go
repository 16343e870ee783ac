package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// bpe is a BPE model: a vocabulary, and merges ranked by their place in
// the list.
type bpe struct {
	vocab map[string]uint32
	// merges maps a pair of ids (left<<32 | right) to its rank and the id
	// of the merged token.
	merges       map[uint64]merge
	byteFallback bool
	// byteIDs are the ids of <0x00>…<0xFF> under byte fallback, where
	// haveByte says the vocabulary has them.
	byteIDs      [256]uint32
	haveByte     [256]bool
	unk          uint32
	haveUnk      bool
	fuseUnk      bool
	ignoreMerges bool
	prefix       string // continuing_subword_prefix
	suffix       string // end_of_word_suffix
}

type merge struct {
	rank uint32
	id   uint32
}

// bpeFile is tokenizer.json's model.
type bpeFile struct {
	Type                    string            `json:"type"`
	Vocab                   map[string]uint32 `json:"vocab"`
	Merges                  []json.RawMessage `json:"merges"`
	Dropout                 *float64          `json:"dropout"`
	UnkToken                *string           `json:"unk_token"`
	ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
	FuseUnk                 bool              `json:"fuse_unk"`
	ByteFallback            bool              `json:"byte_fallback"`
	IgnoreMerges            bool              `json:"ignore_merges"`
}

func parseBPE(raw json.RawMessage) (*bpe, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, jsonscan.Explain("", raw, err)
	}
	if head.Type != "" && head.Type != "BPE" {
		return nil, fmt.Errorf("type: the %s model is not read here (only BPE): its count could differ from the tokenizer's", head.Type)
	}
	var f bpeFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, jsonscan.Explain("", raw, err)
	}
	if f.Dropout != nil && *f.Dropout > 0 {
		return nil, fmt.Errorf("dropout: %v: BPE dropout tokenizes a text differently each time, so it has no one count; a model's tokenizer.json has none", *f.Dropout)
	}
	if len(f.Vocab) == 0 {
		return nil, errors.New("vocab: missing or empty")
	}
	m := &bpe{vocab: f.Vocab, byteFallback: f.ByteFallback, fuseUnk: f.FuseUnk, ignoreMerges: f.IgnoreMerges,
		merges: make(map[uint64]merge, len(f.Merges))}
	if f.ContinuingSubwordPrefix != nil {
		m.prefix = *f.ContinuingSubwordPrefix
	}
	if f.EndOfWordSuffix != nil {
		m.suffix = *f.EndOfWordSuffix
	}
	if f.UnkToken != nil {
		id, ok := f.Vocab[*f.UnkToken]
		if !ok {
			return nil, fmt.Errorf("unk_token: %q is not in the vocab", *f.UnkToken)
		}
		m.unk, m.haveUnk = id, true
	}
	if f.ByteFallback {
		for b := range 256 {
			m.byteIDs[b], m.haveByte[b] = f.Vocab[fmt.Sprintf("<0x%02X>", b)]
		}
	}
	for i, r := range f.Merges {
		a, b, err := mergePair(r)
		if err != nil {
			return nil, fmt.Errorf("merges[%d]: %w", i, err)
		}
		ia, oka := f.Vocab[a]
		ib, okb := f.Vocab[b]
		if !oka || !okb {
			return nil, fmt.Errorf("merges[%d]: %q or %q is not in the vocab", i, a, b)
		}
		joined := a + strings.TrimPrefix(b, m.prefix)
		id, ok := f.Vocab[joined]
		if !ok {
			return nil, fmt.Errorf("merges[%d]: the merged token %q is not in the vocab", i, joined)
		}
		m.merges[uint64(ia)<<32|uint64(ib)] = merge{rank: uint32(i), id: id}
	}
	return m, nil
}

// mergePair reads a merge, ["a", "b"] or the older "a b".
func mergePair(raw json.RawMessage) (string, string, error) {
	var pair []string
	if err := json.Unmarshal(raw, &pair); err == nil {
		if len(pair) != 2 {
			return "", "", fmt.Errorf("%d tokens: want 2", len(pair))
		}
		return pair[0], pair[1], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", "", errors.New("want [\"a\", \"b\"] or \"a b\"")
	}
	parts := strings.Split(s, " ")
	if len(parts) != 2 {
		return "", "", fmt.Errorf("%q: want two tokens with one space between", s)
	}
	return parts[0], parts[1], nil
}

// symbol is a token of a word being merged, linked to its neighbours.
type symbol struct {
	id         uint32
	prev, next int
	size       int // bytes; 0 once merged into its left neighbour
}

// count is the number of tokens the model makes of one split.
func (m *bpe) count(word string) int {
	if word == "" {
		return 0
	}
	if m.ignoreMerges {
		if _, ok := m.vocab[word]; ok {
			return 1
		}
	}
	syms := m.symbols(word)
	if len(syms) < 2 {
		return len(syms)
	}
	return m.mergeAll(syms)
}

// symbols are the word's characters as tokens: a character not in the
// vocabulary becomes its bytes' tokens under byte fallback, else the
// unknown token (one for a run of them when fuse_unk is set), else nothing.
func (m *bpe) symbols(word string) []symbol {
	syms := make([]symbol, 0, len(word))
	add := func(id uint32, size int) {
		syms = append(syms, symbol{id: id, prev: len(syms) - 1, next: len(syms) + 1, size: size})
	}
	var buf []byte
	pendingUnk, unkSize := false, 0
	for i, r := range word {
		size := utf8.RuneLen(r)
		buf = buf[:0]
		if i > 0 {
			buf = append(buf, m.prefix...)
		}
		buf = utf8.AppendRune(buf, r)
		if i+size == len(word) {
			buf = append(buf, m.suffix...)
		}
		if id, ok := m.vocab[string(buf)]; ok {
			if pendingUnk {
				add(m.unk, unkSize)
				pendingUnk = false
			}
			add(id, size)
			continue
		}
		if m.byteFallback && m.haveBytesOf(buf) {
			for _, b := range buf {
				add(m.byteIDs[b], 1)
			}
			continue
		}
		if !m.haveUnk {
			continue
		}
		switch {
		case pendingUnk && m.fuseUnk:
			unkSize += size
		case pendingUnk:
			add(m.unk, unkSize)
			unkSize = size
		default:
			pendingUnk, unkSize = true, size
		}
	}
	if pendingUnk {
		add(m.unk, unkSize)
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	return syms
}

// haveBytesOf says every byte of b has its byte-fallback token; a
// character with one missing is unknown, as in tokenizers.
func (m *bpe) haveBytesOf(b []byte) bool {
	for _, c := range b {
		if !m.haveByte[c] {
			return false
		}
	}
	return true
}

// candidate is a merge that may apply at pos: the pair of the symbol at
// pos and the one after it.
type candidate struct {
	rank, id uint32
	pos      int
}

// before orders candidates: lowest rank first, leftmost among equals.
func (c candidate) before(d candidate) bool {
	if c.rank != d.rank {
		return c.rank < d.rank
	}
	return c.pos < d.pos
}

// queue is a binary min-heap of candidates.
type queue []candidate

func (q *queue) push(c candidate) {
	*q = append(*q, c)
	h := *q
	for i := len(h) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h[i].before(h[parent]) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (q *queue) pop() candidate {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, small := 2*i+1, i
		if l < len(h) && h[l].before(h[small]) {
			small = l
		}
		if r := l + 1; r < len(h) && h[r].before(h[small]) {
			small = r
		}
		if small == i {
			break
		}
		h[i], h[small] = h[small], h[i]
		i = small
	}
	*q = h
	return top
}

// mergeAll applies the merges to syms, lowest rank first and leftmost
// first among equal ranks, and returns the number of tokens left. A
// candidate whose pair has changed since it was queued is skipped when
// the pair now there merges into a different token, as tokenizers does.
func (m *bpe) mergeAll(syms []symbol) int {
	q := make(queue, 0, len(syms))
	for i := 0; i+1 < len(syms); i++ {
		if mg, ok := m.merges[uint64(syms[i].id)<<32|uint64(syms[i+1].id)]; ok {
			q.push(candidate{mg.rank, mg.id, i})
		}
	}
	n := len(syms)
	for len(q) > 0 {
		top := q.pop()
		cur := &syms[top.pos]
		if cur.size == 0 || cur.next < 0 {
			continue
		}
		right := syms[cur.next]
		if mg, ok := m.merges[uint64(cur.id)<<32|uint64(right.id)]; !ok || mg.id != top.id {
			continue
		}
		cur.id = top.id
		cur.size += right.size
		syms[cur.next].size = 0
		cur.next = right.next
		if right.next >= 0 {
			syms[right.next].prev = top.pos
		}
		n--
		if cur.prev >= 0 {
			if mg, ok := m.merges[uint64(syms[cur.prev].id)<<32|uint64(cur.id)]; ok {
				q.push(candidate{mg.rank, mg.id, cur.prev})
			}
		}
		if cur.next >= 0 {
			if mg, ok := m.merges[uint64(cur.id)<<32|uint64(syms[cur.next].id)]; ok {
				q.push(candidate{mg.rank, mg.id, top.pos})
			}
		}
	}
	return n
}
