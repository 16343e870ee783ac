package verifier

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/timeaware/timeaware/rewards"
)

var decodeSeeds = []string{
	`{"items":[]}`,
	`{"items":[{}]}`,
	` {"other":{"a":[1,2,{"b":null}]},"items":[{"data_source":"timely/general","solution_str":"a\nb \\boxed{x} \u00e9 \ud83d\ude00 \"q\"","ground_truth":"42","extra_info":{"elapsed_s":1.5e1,"time_limit_s":-0.0,"index":3,"split":"train","tools_kwargs":{"get_duration":{"create_kwargs":{"x":true}}}}}]} `,
	`{"items":[{"data_source":"tictoc/decision","solution_str":"x","ground_truth":{"preferred":"tool","margin":1.0},"extra_info":null}]}`,
	`{"items":[{"data_source":"timepuzzles","ground_truth":null,"extra_info":{"timer":null,"score":null}}]}`,
	`{"items":[{"data_source":"timely/game","extra_info":{"score":10,"max_score":1E2,"timer":"AAAA.BBBB"}},{"solution_str":"é"}]}`,
	`{"items":[{"data_source":5}]}`,
	`{"items":[{"extra_info":{"elapsed_s":"3"}}]}`,
	`{"items":[{"extra_info":{"elapsed_s":01}}]}`,
	`{"items":[{"solution_str":"\ud800"}]}`,
	`{"items":[{"solution_str":"bad` + "\xff" + `"}]}`,
	`{"items":[1]}`,
	`{"items":null}`,
	`{"items":[{"a":1},]}`,
	`{"items":[]} x`,
	`{"ite\u006ds":[]}`,
	`{"items":[{"data_source":"timely/general","extra_info":{"timer":{"speed_factor":2,"jitter":0.05},"elapsed_s":3}}]}`,
	`{"items":[{"extra_info":{"timer":"tok.en","timer":{"speed_factor":1}}}]}`,
	`{"items":[{"extra_info":{"timer":7}}]}`,
	`{"items":[{"data_source":"length/elastic","solution_str":"<think>a</think>b","ground_truth":"b","extra_info":{"response_tokens":12,"think_tokens":4.0,"answer_tokens":6,"token_budget":null,"think_budget":8,"answer_budget":1e1,"answer_check":"timely/general"}}]}`,
	`{"items":[{"data_source":"length/anytime","extra_info":{"anytime":[ {"budget":1,"summary":"x"} , {"budget":2,"summary":"\u0079"}],"think_tokens":3}}]}`,
	`{"items":[{"extra_info":{"anytime":null,"answer_check":null}}]}`,
	`{"items":[{"extra_info":{"response_tokens":"12","anytime":[}}]}`,
}

// dupSeeds name a member twice, where the fast path reads and where it
// skips, and where only the general path gets to.
var dupSeeds = []string{
	`{"items":[{"data_source":"timely/general","extra_info":{"timer":"tok.en","Timer":"other"}}]}`,
	`{"items":[{"ground_truth":{"preferred":"tool","pre\u0066erred":"direct"}}]}`,
	`{"items":[],"Items":[{}]}`,
	`{"Items":[],"items":[{}]}`,
	`{"other":[{"a":1},{"a":1,"A":2}],"items":[]}`,
	`{"items":[{"data_source":5},{"solution_str":"a","solution_str":"b"}]}`,
	`{"items":[{"extra_info":{"timer":{"speed_factor":1,"speed_factor":2}}}]}`,
	`{"items":[{"extra_info":null,"extra_info":{}}]}`,
	`{"items":[{"\u212aey":1,"key":2}]}`,
}

// FuzzDecodeBatchFast: whenever the fast decoder accepts a body, the
// general decoder accepts it too and decodes the same items.
func FuzzDecodeBatchFast(f *testing.F) {
	for _, s := range append(decodeSeeds, dupSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok, _ := decodeBatchFast(body, testLimits)
		if !ok {
			return
		}
		var want batchRequest
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatalf("fast decoder accepted %q; general decoder: %v", body, err)
		}
		requireSameItems(t, want.Items, fast)
	})
}

func requireSameItems(t *testing.T, want, got []rewards.Item) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		require.Equal(t, w.DataSource, g.DataSource, "item %d data_source", i)
		require.Equal(t, w.SolutionStr, g.SolutionStr, "item %d solution_str", i)
		require.Equal(t, string(w.GroundTruth), string(g.GroundTruth), "item %d ground_truth", i)
		require.Equal(t, w.ExtraInfo.Timer, g.ExtraInfo.Timer, "item %d timer", i)
		for name, pair := range map[string][2]*float64{
			"time_limit_s": {w.ExtraInfo.TimeLimitS, g.ExtraInfo.TimeLimitS},
			"elapsed_s":    {w.ExtraInfo.ElapsedS, g.ExtraInfo.ElapsedS},
			"score":        {w.ExtraInfo.Score, g.ExtraInfo.Score},
			"max_score":    {w.ExtraInfo.MaxScore, g.ExtraInfo.MaxScore},
			"accuracy":     {w.ExtraInfo.Accuracy, g.ExtraInfo.Accuracy},
		} {
			require.Equal(t, pair[0] == nil, pair[1] == nil, "item %d %s presence", i, name)
			if pair[0] != nil {
				require.Equal(t, *pair[0], *pair[1], "item %d %s", i, name)
			}
		}
	}
}

func TestDecodeBatchFast(t *testing.T) {
	accepted := 0
	for _, s := range decodeSeeds {
		t.Run(s, func(t *testing.T) {
			fast, ok, _ := decodeBatchFast([]byte(s), testLimits)
			var want batchRequest
			err := json.Unmarshal([]byte(s), &want)
			if ok {
				accepted++
				require.NoError(t, err)
				requireSameItems(t, want.Items, fast)
			}
		})
	}
	assert.GreaterOrEqual(t, accepted, 6, "the common shapes take the fast path")
	// The items do not alias the body, which is a pooled buffer.
	body := []byte(`{"items":[{"data_source":"timely/general","solution_str":"abc","ground_truth":"1"}]}`)
	items, ok, _ := decodeBatchFast(body, testLimits)
	require.True(t, ok)
	for i := range body {
		body[i] = 'x'
	}
	assert.Equal(t, "timely/general", items[0].DataSource)
	assert.Equal(t, "abc", items[0].SolutionStr)
	assert.Equal(t, `"1"`, string(items[0].GroundTruth))
}

var testLimits = limits{maxItems: 1 << 20, maxDepth: defaultMaxDepth, maxString: defaultMaxString}

// TestDuplicateKeysFastAndGeneral: a body that names a member twice gets
// one answer whichever path reads it; the fast path answers itself when it
// reaches the duplicate, and leaves the body to checkJSON when it stops
// earlier.
func TestDuplicateKeysFastAndGeneral(t *testing.T) {
	large := `{"items":[{"extra_info":{`
	for i := range 40 {
		large += fmt.Sprintf(`"k%d":%d,`, i, i)
	}
	large += `"K7":0}}]}`
	tests := []struct {
		name, body string
		fast       bool // the fast path answers
		field      string
	}{
		{"the timer", `{"items":[{},{"extra_info":{"timer":"a","timer":"b"}}]}`, true, "items[1].extra_info.timer"},
		{"the timer after a key the fast path leaves", `{"items":[{"Data_source":"x"},{"extra_info":{"timer":"a","timer":"b"}}]}`, false, "items[1].extra_info.timer"},
		{"after a wrong type", `{"items":[{"data_source":5},{"solution_str":"a","solution_str":"b"}]}`, false, "items[1].solution_str"},
		{"after invalid UTF-8", "{\"items\":[{\"solution_str\":\"bad\xff\",\"x\":1,\"x\":2}]}", false, "items[0].x"},
		{"in the ground truth", `{"items":[{"ground_truth":{"a":[{"b":1,"B":2}]}}]}`, true, "items[0].ground_truth.a[0].B"},
		{"in the timer's settings", `{"items":[{"extra_info":{"timer":{"jitter":1,"jitter":2}}}]}`, true, "items[0].extra_info.timer.jitter"},
		{"extra_info, once null", `{"items":[{"extra_info":null,"extra_info":{}}]}`, true, "items[0].extra_info"},
		{"a member before the items", `{"other":{"x":1,"x":2},"items":[]}`, true, "other.x"},
		{"the items, second in case", `{"items":[],"Items":[]}`, true, "Items"},
		{"the items, first in case", `{"Items":[],"items":[]}`, false, "items"},
		{"many members", large, true, "items[0].extra_info.K7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ok, refused := decodeBatchFast([]byte(tc.body), testLimits)
			require.False(t, ok)
			general := checkJSON([]byte(tc.body), testLimits, "items")
			var ae *apiError
			require.ErrorAs(t, general, &ae)
			assert.Equal(t, "duplicate_key", ae.Code)
			assert.Equal(t, tc.field, ae.Field)
			if tc.fast {
				assert.Equal(t, general, refused, "the fast path answers as checkJSON does")
			} else {
				assert.NoError(t, refused, "the fast path stops before the duplicate")
			}
		})
	}
}

// FuzzDuplicateKeysAgree: for any body, the fast path and the general one
// (checkJSON, which the general decoders follow) agree on duplicates:
// when the fast path refuses one, checkJSON refuses it in the same words;
// when the fast path accepts the body, checkJSON finds none. (When the
// fast path stops on anything else, the service answers with checkJSON.)
func FuzzDuplicateKeysAgree(f *testing.F) {
	for _, s := range append(dupSeeds, decodeSeeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_, ok, refused := decodeBatchFast(body, testLimits)
		general := checkJSON(body, testLimits, "items")
		if isDuplicate(refused) {
			require.Equal(t, general, refused, "%q", body)
		}
		if ok {
			require.False(t, isDuplicate(general), "fast path accepted %q; checkJSON: %v", body, general)
		}
	})
}

func isDuplicate(err error) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Code == "duplicate_key" && strings.Contains(ae.Message, "duplicate key")
}
