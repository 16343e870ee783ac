// Package tokenizer reads a Hugging Face tokenizer.json and counts the
// tokens its BPE model makes of a text, as the tokenizers library's
// encode does without adding special tokens: the added tokens are split
// out first and count one each, the rest is normalized, pre-tokenized and
// merged by the BPE model.
//
// It serves the verifier's length rewards, which check a trainer's token
// counts against the text they describe, so it counts and does not return
// ids. The pipelines of today's byte-level BPE models (GPT-2, Llama 3,
// Qwen, DeepSeek, the GPT-4o family) and of SentencePiece-style BPE with
// byte fallback (Llama 2, Mistral) are read; a component it does not know
// (a WordPiece or Unigram model, a normalizer such as BertNormalizer) is
// refused when the file is read, naming the field, rather than counted
// differently.
//
// Split patterns are the Oniguruma regular expressions of tokenizers, with
// look-ahead: those of GPT-2, Llama 3 and Qwen run on scanners written for
// them (scan.go), any other on a backtracking engine compatible with them
// (github.com/dlclark/regexp2), which Go's own regexp, without
// look-ahead, cannot be.
package tokenizer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sync/semaphore"

	"github.com/timeaware/timeaware/internal/jsonscan"
)

// Tokenizer counts tokens as one tokenizer.json does. It is safe for
// concurrent use.
type Tokenizer struct {
	// added holds the added tokens matched on the text as given, and
	// addedNorm those matched on the normalized text.
	added, addedNorm *addedSet
	norm             normalizer
	pre              []preTokenizer
	model            *bpe
	cache            *wordCache
	// mapBytes says the splits reach the model as bytes, to be written as
	// byte-level characters (a last ByteLevel step, byteLevel.mapLater).
	mapBytes bool
	// work bounds the memory the merges of long splits hold at once.
	work budget
}

// budget is a weighted semaphore of bytes (*semaphore.Weighted).
type budget interface {
	Acquire(ctx context.Context, n int64) error
	Release(n int64)
}

// Merging a split holds its symbols and its queue of candidate merges,
// at most workPerByte bytes for each byte of it. A split longer than
// cacheWordBytes reserves that much from the Tokenizer's budget of memory for
// as long as it merges, waiting while other counts hold it, so that the
// counts in flight together hold at most that budget whatever their
// number (workPerByte × MaxSplitBytes, 64 MiB); a split longer than
// MaxSplitBytes, whose merge alone would take the whole budget, is not
// counted.
const (
	workPerByte = 64
	// MaxSplitBytes is the longest split Count merges: a word, a run of
	// one kind of character, or, for a tokenizer without a pre-tokenizer
	// (Llama 2's), the whole text between added tokens.
	MaxSplitBytes = 1 << 20
)

// ErrTooLong is the error of a text with a split longer than
// MaxSplitBytes.
var ErrTooLong = errors.New("too long to count")

// file is the part of tokenizer.json that decides the count.
type file struct {
	AddedTokens  []addedToken    `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        json.RawMessage `json:"model"`
}

// Load reads the tokenizer.json at path. Its errors name the path and the
// field.
func Load(path string) (*Tokenizer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse reads a tokenizer.json. Its errors name the field, as
// "pre_tokenizer.pretokenizers[1]: …".
func Parse(data []byte) (*Tokenizer, error) {
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", jsonscan.Explain("", data, err))
	}
	if len(f.Model) == 0 || string(f.Model) == "null" {
		return nil, errors.New("model: missing")
	}
	t := &Tokenizer{cache: newWordCache(), work: semaphore.NewWeighted(workPerByte * MaxSplitBytes)}
	var err error
	if t.model, err = parseBPE(f.Model); err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if t.norm, err = parseNormalizer(f.Normalizer, "normalizer"); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer, "pre_tokenizer"); err != nil {
		return nil, err
	}
	if n := len(t.pre); n > 0 {
		if bl, ok := t.pre[n-1].(byteLevel); ok {
			bl.mapLater, t.mapBytes = true, true
			t.pre[n-1] = bl
		}
	}
	if t.added, t.addedNorm, err = parseAdded(f.AddedTokens); err != nil {
		return nil, err
	}
	return t, nil
}

// split is a piece of text on its way to the model; first says it starts
// where the whole text starts (Metaspace's prepend_scheme "first").
type split struct {
	s     string
	first bool
}

// countSplit is the model's count of one split.
func (t *Tokenizer) countSplit(s string) (int, error) {
	if len(s) > cacheWordBytes {
		if len(s) > MaxSplitBytes {
			return 0, fmt.Errorf("%w: it has a split (a word, a run of one kind of character, or with no pre-tokenizer the text itself) of %d bytes, over the %d one count merges", ErrTooLong, len(s), MaxSplitBytes)
		}
		need := int64(len(s)) * workPerByte
		// Acquire fails only when its context ends, which Background never does.
		_ = t.work.Acquire(context.Background(), need)
		defer t.work.Release(need)
	}
	if t.mapBytes {
		s = byteString(s)
	}
	return t.model.count(s), nil
}

// Count is the number of tokens encode makes of text without adding
// special tokens (add_special_tokens=False): the length of the ids. Bytes
// that are not UTF-8 count as U+FFFD, as a decoded response shows them. It
// fails when a Split or Replace pattern of the file cannot finish on the
// text, and with ErrTooLong for a split longer than MaxSplitBytes.
func (t *Tokenizer) Count(text string) (int, error) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	n := 0
	var splits []split
	err := t.added.each(text, func(piece string, at int, token bool) error {
		if token {
			n++
			return nil
		}
		s := piece
		if t.norm != nil {
			var err error
			if s, err = t.norm.normalize(s); err != nil {
				return err
			}
		}
		return t.addedNorm.each(s, func(p string, at2 int, token bool) error {
			if token {
				n++
				return nil
			}
			if p == "" {
				return nil
			}
			splits = append(splits[:0], split{p, at == 0 && at2 == 0})
			for _, pt := range t.pre {
				var err error
				if splits, err = pt.apply(splits); err != nil {
					return err
				}
			}
			for _, sp := range splits {
				c, err := t.cache.count(sp.s, t.countSplit)
				if err != nil {
					return err
				}
				n += c
			}
			return nil
		})
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
