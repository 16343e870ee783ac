package shard

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  string
	}{
		{in: "0/4", want: Shard{0, 4}},
		{in: "3/4", want: Shard{3, 4}},
		{in: "0/1", want: Shard{0, 1}},
		{in: "4/4", err: "want i/n with 0 <= i < n"},
		{in: "-1/4", err: "want i/n with 0 <= i < n"},
		{in: "0/0", err: "want i/n with 0 <= i < n"},
		{in: "1/4x", err: "want i/n, such as 0/4"},
		{in: "01/4", err: "want i/n, such as 0/4"},
		{in: "1", err: "want i/n, such as 0/4"},
		{in: "", err: "want i/n, such as 0/4"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestValidate(t *testing.T) {
	assert.NoError(t, Shard{}.Validate())
	assert.NoError(t, Shard{2, 3}.Validate())
	assert.ErrorContains(t, Shard{3, 3}.Validate(), "shard 3/3: want 0 <= i < n")
	assert.ErrorContains(t, Shard{-1, 3}.Validate(), "shard -1/3")
}

// The shards of one count cover every item exactly once, by id and by index,
// and Rows counts what HasIndex keeps; the id hash is FNV-1a, so shards made
// before this package stay the same.
func TestShardsPartition(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		for i := int64(0); i < 50; i++ {
			id := fmt.Sprintf("traj_%d", i)
			byID, byIndex := 0, 0
			for k := 0; k < n; k++ {
				s := Shard{k, n}
				if s.HasID(id) {
					byID++
					h := fnv.New64a()
					h.Write([]byte(id))
					assert.Equal(t, uint64(k), h.Sum64()%uint64(n))
				}
				if s.HasIndex(i) {
					byIndex++
					assert.Equal(t, int64(k), i%int64(n))
				}
			}
			assert.Equal(t, 1, byID, "id %s, %d shards", id, n)
			assert.Equal(t, 1, byIndex, "index %d, %d shards", i, n)
		}
		for k := 0; k < n; k++ {
			s := Shard{k, n}
			for _, r := range [][2]int64{{0, 0}, {0, 1}, {0, 10}, {3, 17}, {5, 2}, {11, 40}} {
				want := int64(0)
				for i := r[0]; i < r[0]+r[1]; i++ {
					if s.HasIndex(i) {
						want++
					}
				}
				assert.Equal(t, want, s.Rows(r[0], r[1]), "shard %d/%d, start %d count %d", k, n, r[0], r[1])
			}
		}
	}
	assert.True(t, Shard{}.HasID("x"))
	assert.True(t, Shard{}.HasIndex(5))
	assert.Equal(t, int64(9), Shard{}.Rows(3, 9))
}

func TestRowsByHand(t *testing.T) {
	for _, tc := range []struct {
		start, count int64
		i, n         int
		want         int64
	}{
		{0, 10, 0, 1, 10}, {0, 10, 0, 0, 10}, {0, 10, 0, 4, 3}, {0, 10, 1, 4, 3}, {0, 10, 2, 4, 2}, {0, 10, 3, 4, 2},
		{5, 3, 0, 4, 0}, {5, 3, 1, 4, 1}, {5, 3, 2, 4, 1}, {5, 3, 3, 4, 1}, {0, 0, 0, 3, 0},
		{-3, 3, 0, 3, 1}, {-3, 3, 2, 3, 1},
	} {
		assert.Equal(t, tc.want, Shard{tc.i, tc.n}.Rows(tc.start, tc.count), "%+v", tc)
	}
	assert.True(t, Shard{2, 3}.HasIndex(-1), "-1 is in the last shard")
	assert.False(t, Shard{0, 3}.HasIndex(-1))
}
