package tokenizer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cached is the number of splits the cache holds.
func (c *wordCache) cached() int {
	n := 0
	for i := range c.shards {
		c.shards[i].Lock()
		n += len(c.shards[i].m)
		c.shards[i].Unlock()
	}
	return n
}

// TestCacheHoldsWhatItMay: splits up to cacheWordBytes are kept, longer
// ones are not, and no shard holds more than cacheShardWords however many
// splits pass; the counts are the same from the cache as without it.
func TestCacheHoldsWhatItMay(t *testing.T) {
	c := newWordCache()
	calls := 0
	count := func(s string) int { calls++; return len(s) }
	for i := range 1000 {
		require.Equal(t, len(fmt.Sprint("w", i)), c.count(fmt.Sprint("w", i), count))
	}
	assert.Equal(t, 1000, c.cached(), "1,000 short splits, about 31 a shard")
	assert.Equal(t, 1000, calls)
	for i := range 1000 {
		c.count(fmt.Sprint("w", i), count)
	}
	assert.Equal(t, 1000, calls, "every split counted once")

	edge := strings.Repeat("x", cacheWordBytes)
	c.count(edge, count)
	assert.Equal(t, 1001, c.cached(), "a split of cacheWordBytes is kept")
	long := strings.Repeat("y", cacheWordBytes+1)
	require.Equal(t, cacheWordBytes+1, c.count(long, count))
	assert.Equal(t, 1001, c.cached(), "a longer one is not")

	most := 0
	for i := range 100 * cacheShardWords {
		c.count(fmt.Sprint("v", i), count)
		for j := range c.shards {
			most = max(most, len(c.shards[j].m))
		}
	}
	assert.Equal(t, cacheShardWords, most, "a shard fills to cacheShardWords and no further")
	assert.Greater(t, c.cached(), cacheShards*100, "a full shard is emptied, not the whole cache")
}
