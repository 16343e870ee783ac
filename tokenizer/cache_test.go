package tokenizer

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/semaphore"
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
	count := func(s string) (int, error) { calls++; return len(s), nil }
	for i := range 1000 {
		n, err := c.count(fmt.Sprint("w", i), count)
		require.NoError(t, err)
		require.Equal(t, len(fmt.Sprint("w", i)), n)
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
	n, err := c.count(long, count)
	require.NoError(t, err)
	require.Equal(t, cacheWordBytes+1, n)
	assert.Equal(t, 1001, c.cached(), "a longer one is not")
	_, err = c.count("failing", func(string) (int, error) { return 0, errors.New("no count") })
	require.EqualError(t, err, "no count")
	assert.Equal(t, 1001, c.cached(), "a failed count is not kept")

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

// recorder is a budget that records what is taken and given back.
type recorder struct {
	mu      sync.Mutex
	taken   []int64
	held    int64
	maxHeld int64
}

func (r *recorder) Acquire(_ context.Context, n int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.taken = append(r.taken, n)
	r.held += n
	r.maxHeld = max(r.maxHeld, r.held)
	return nil
}

func (r *recorder) Release(n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held -= n
}

// TestLongSplitsReserveTheirWork: a split longer than cacheWordBytes
// reserves workPerByte bytes for each of its bytes while it merges and
// gives them back; a shorter one reserves nothing; a split over
// MaxSplitBytes is refused with ErrTooLong, naming its length, and one of
// exactly MaxSplitBytes is counted. The real budget holds workPerByte ×
// MaxSplitBytes.
func TestLongSplitsReserveTheirWork(t *testing.T) {
	// the test tokenizer without a pre-tokenizer: the text is one split
	tok, err := Load(filepath.Join("testdata", "llama2.json"))
	require.NoError(t, err)
	r := &recorder{}
	tok.work = r
	// Llama 2's normalizer puts a 3-byte ▁ before the text
	for _, tc := range []struct {
		bytes int
		want  []int64
	}{
		{cacheWordBytes - 3, nil},
		{cacheWordBytes - 2, []int64{(cacheWordBytes + 1) * workPerByte}},
		{4096, []int64{(4096 + 3) * workPerByte}},
	} {
		r.taken = nil
		n, err := tok.Count(strings.Repeat("z", tc.bytes))
		require.NoError(t, err)
		assert.Positive(t, n)
		assert.Equal(t, tc.want, r.taken, "%d bytes", tc.bytes)
		assert.Zero(t, r.held, "given back")
	}
	_, err = tok.Count(strings.Repeat("z", MaxSplitBytes-3))
	require.NoError(t, err, "a split of exactly MaxSplitBytes")
	assert.Equal(t, int64(workPerByte*MaxSplitBytes), r.maxHeld, "the longest split takes the whole budget")
	_, err = tok.Count(strings.Repeat("z", MaxSplitBytes-2))
	require.ErrorIs(t, err, ErrTooLong)
	assert.ErrorContains(t, err, fmt.Sprintf("of %d bytes, over the %d one count merges", MaxSplitBytes+1, MaxSplitBytes))

	fresh, err := Load(filepath.Join("testdata", "llama2.json"))
	require.NoError(t, err)
	_, err = fresh.Count(strings.Repeat("z", 4096))
	require.NoError(t, err)
	w, ok := fresh.work.(*semaphore.Weighted)
	require.True(t, ok)
	require.True(t, w.TryAcquire(workPerByte*MaxSplitBytes), "the whole budget is free again after a count")
	require.False(t, w.TryAcquire(1), "and no more")
}
