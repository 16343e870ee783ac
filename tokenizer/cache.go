package tokenizer

import (
	"hash/maphash"
	"strings"
	"sync"
)

// The BPE model counts each split on its own, and the splits of real text
// repeat (words, spaces, punctuation): a bounded cache of the counts of
// short splits saves most merging.
const (
	cacheShards = 32
	// cacheShardWords bounds each shard; a full shard is emptied, so the
	// cache holds at most cacheShards × cacheShardWords splits of at most
	// cacheWordBytes bytes (about 10 MB).
	cacheShardWords = 2048
	cacheWordBytes  = 64
)

// wordCache maps splits to their counts, safe for concurrent use.
type wordCache struct {
	seed   maphash.Seed
	shards [cacheShards]struct {
		sync.Mutex
		m map[string]int
	}
}

func newWordCache() *wordCache {
	return &wordCache{seed: maphash.MakeSeed()}
}

// count returns the count of word, computing it with f when it is not
// held; an error of f is returned and nothing is kept.
func (c *wordCache) count(word string, f func(string) (int, error)) (int, error) {
	if len(word) > cacheWordBytes {
		return f(word)
	}
	sh := &c.shards[maphash.String(c.seed, word)%cacheShards]
	sh.Lock()
	n, ok := sh.m[word]
	sh.Unlock()
	if ok {
		return n, nil
	}
	n, err := f(word)
	if err != nil {
		return 0, err
	}
	sh.Lock()
	if sh.m == nil || len(sh.m) >= cacheShardWords {
		sh.m = make(map[string]int, cacheShardWords)
	}
	sh.m[strings.Clone(word)] = n
	sh.Unlock()
	return n, nil
}
