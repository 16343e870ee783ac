package verifier

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// postRoutes are the routes that read a JSON body; {id} is filled with a
// timer token.
var postRoutes = []string{
	"/v1/score", "/v1/score/batch", "/v1/openrlhf", "/v1/timers",
	"/v1/timers/{id}/spans", "/v1/tools/get_duration", "/v1/envs/negotiation/step",
}

// refusal is the part of an error answer a client acts on.
type refusal struct {
	status               int
	code, field, message string
}

func (f *fixture) refusal(t *testing.T, path, body string) refusal {
	t.Helper()
	code, out := f.do(t, "POST", path, body)
	e, ok := out["error"].(map[string]any)
	require.True(t, ok, "POST %s %s: %d %v", path, body, code, out)
	field, _ := e["field"].(string)
	return refusal{code, e["code"].(string), field, e["message"].(string)}
}

// TestEveryRouteRefusesTheSameBodies sends one body to every route that
// reads one: a member named twice, anywhere, or anything after the object,
// is refused before the route looks at what the body means, with one
// answer whatever decoder the route takes.
func TestEveryRouteRefusesTheSameBodies(t *testing.T) {
	f := newFixture(t, nil)
	code, created := f.do(t, "POST", "/v1/timers", `{"rollout_id":"dup-1"}`)
	require.Equal(t, http.StatusCreated, code, "%v", created)
	tok := created["timer"].(string)

	dup := func(field, key string, at, first int) refusal {
		return refusal{400, "duplicate_key", field,
			fmt.Sprintf("%s: duplicate key %q at byte %d (first at byte %d); send each key once", field, key, at, first)}
	}
	trailing := func(at int, c string) refusal {
		return refusal{400, "malformed_json", "", fmt.Sprintf("malformed JSON at byte %d: invalid character %s after top-level value", at, c)}
	}
	tests := []struct {
		name, body string
		want       refusal
	}{
		{"a member twice", `{"timer":"a","timer":"b"}`, dup("timer", "timer", 14, 2)},
		{"a member twice, differing in case", `{"timer":"a","Timer":"b"}`, refusal{400, "duplicate_key", "Timer",
			`Timer: duplicate key "Timer" at byte 14 (the same as "timer" at byte 2, ignoring case); send each key once`}},
		{"a member twice, once escaped", `{"tim\u0065r":"a","timer":"b"}`, dup("timer", "timer", 19, 2)},
		{"a member twice in a member no route reads", `{"other":{"list":[{"k":1},{"k":1,"k":2}]}}`, dup("other.list[1].k", "k", 34, 28)},
		{"a member twice in an array body", `[{"a":1,"a":2}]`, dup("[0].a", "a", 9, 3)},
		{"stray text after the object", `{}xyz`, trailing(3, `'x'`)},
		{"a second object", `{} {}`, trailing(4, `'{'`)},
		{"a closing bracket", "{}\n]", trailing(4, `']'`)},
		{"a character past ASCII", `{}é`, trailing(3, `'é'`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, route := range postRoutes {
				path := strings.Replace(route, "{id}", tok, 1)
				assert.Equal(t, tc.want, f.refusal(t, path, tc.body), route)
			}
		})
	}
}

// TestRoutesRefuseDuplicateFields: each route's own body with one of its
// fields named twice, which its decoder used to settle by keeping one of
// the values, is refused naming the field; so is the route's body with
// data after it.
func TestRoutesRefuseDuplicateFields(t *testing.T) {
	f := newFixture(t, nil)
	code, created := f.do(t, "POST", "/v1/timers", `{"rollout_id":"dup-2","time_limit_s":30}`)
	require.Equal(t, http.StatusCreated, code, "%v", created)
	tok := created["timer"].(string)
	spans := "/v1/timers/" + tok + "/spans"

	item := func(extra string) string {
		return `{"data_source":"timely/general","solution_str":"<answer>21</answer>","ground_truth":"21","extra_info":{` + extra + `}}`
	}
	okItem := item(`"elapsed_s":1,"time_limit_s":10`)
	dupTimer := item(`"timer":"` + tok + `","timer":{"speed_factor":1}`)
	gt := `{"scenario":{"id":"hand","roles":[{"id":"cand","batna":3},{"id":"hr","batna":4}],"issues":[` +
		`{"id":"salary","options":["low","mid","high"],"points":{"cand":[0,4,8],"hr":[8,4,0]}}]},` +
		`"role":"cand","condition":"time_aware","deadline_s":60,"first_speaker":"cand"}`
	negotiation := func(gt string) string {
		return `{"ground_truth":` + gt + `,"timer":"` + tok + `","message":{"text":"Hello.","action":{"action":"message"}}}`
	}
	label := `{"ground_truth":"21","extra_info":{"elapsed_s":1,"elapsed_s":9,"time_limit_s":10}}`
	// second is where the second name starts: its quote, its name, what
	// follows.
	tests := []struct {
		name, path, body, field, second string
	}{
		{"score: the timer", "/v1/score", dupTimer, "extra_info.timer", `"timer":{`},
		{"score: the data source, in case", "/v1/score", `{"data_source":"timely/general","Data_Source":"timepuzzles","solution_str":"x","ground_truth":"1"}`, "Data_Source", `"Data_Source"`},
		{"score: inside the ground truth", "/v1/score", `{"data_source":"tictoc/decision","solution_str":"x","ground_truth":{"preferred":"tool","preferred":"direct"}}`, "ground_truth.preferred", `"preferred":"direct"`},
		{"batch: the timer of the fourth item", "/v1/score/batch", `{"items":[` + strings.Repeat(okItem+",", 3) + dupTimer + `]}`, "items[3].extra_info.timer", `"timer":{`},
		{"batch: the items", "/v1/score/batch", `{"items":[],"items":[` + okItem + `]}`, "items", `"items":[{`},
		{"openrlhf: a label object", "/v1/openrlhf", `{"query":["<answer>21</answer>","<answer>21</answer>"],"labels":["21",` + label + `]}`, "labels[1].extra_info.elapsed_s", `"elapsed_s":9`},
		{"openrlhf: the labels", "/v1/openrlhf", `{"query":["<answer>21</answer>"],"labels":["21"],"Labels":["20"]}`, "Labels", `"Labels"`},
		{"timers: the rollout", "/v1/timers", `{"rollout_id":"dup-3","time_limit_s":10,"rollout_id":"dup-4"}`, "rollout_id", `"rollout_id":"dup-4"`},
		{"spans: the seconds", spans, `{"seconds":1,"SECONDS":1000}`, "SECONDS", `"SECONDS"`},
		{"get_duration: the timer", "/v1/tools/get_duration", `{"timer":"` + tok + `","timer":"other"}`, "timer", `"timer":"other"`},
		{"negotiation: inside the ground truth", "/v1/envs/negotiation/step", negotiation(strings.Replace(gt, `"batna":3`, `"batna":3,"batna":9`, 1)), "ground_truth.scenario.roles[0].batna", `"batna":9`},
		{"negotiation: the message's action", "/v1/envs/negotiation/step", strings.Replace(negotiation(gt), `{"action":"message"}`, `{"action":"message","action":"accept"}`, 1), "message.action.action", `"action":"accept"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := f.refusal(t, tc.path, tc.body)
			assert.Equal(t, 400, got.status)
			assert.Equal(t, "duplicate_key", got.code)
			assert.Equal(t, tc.field, got.field)
			key, _, _ := strings.Cut(tc.second[1:], `"`)
			at := strings.Index(tc.body, tc.second) + 1
			assert.Contains(t, got.message, fmt.Sprintf("duplicate key %q at byte %d", key, at), "the message names the key and its byte")
		})
	}

	// Well-formed bodies of each route, with data after them.
	for _, tc := range []struct{ route, path, body string }{
		{"score", "/v1/score", okItem},
		{"batch", "/v1/score/batch", `{"items":[` + okItem + `]}`},
		{"openrlhf", "/v1/openrlhf", `{"query":["<answer>21</answer>"],"labels":["21"]}`},
		{"timers", "/v1/timers", `{"rollout_id":"dup-5"}`},
		{"spans", spans, `{"seconds":1}`},
		{"get_duration", "/v1/tools/get_duration", `{"timer":"` + tok + `"}`},
		{"negotiation", "/v1/envs/negotiation/step", negotiation(gt)},
	} {
		for _, after := range []string{"xyz", `{"seconds":1000}`, " 1", ","} {
			t.Run(tc.route+": then "+after, func(t *testing.T) {
				got := f.refusal(t, tc.path, tc.body+after)
				want := refusal{400, "malformed_json", "", fmt.Sprintf("malformed JSON at byte %d: invalid character %s after top-level value",
					len(tc.body)+len(after)-len(strings.TrimLeft(after, " "))+1, strconv.QuoteRune(rune(strings.TrimLeft(after, " ")[0])))}
				assert.Equal(t, want, got)
			})
		}
	}
}

// TestSingleAndBatchAgreeOnADuplicateTimer: the item that scored 0.6 alone
// and 0 in a batch (each decoder kept another of its two timers) is refused
// by both, naming the same member.
func TestSingleAndBatchAgreeOnADuplicateTimer(t *testing.T) {
	f := newFixture(t, nil)
	code, created := f.do(t, "POST", "/v1/timers", `{"rollout_id":"dup-6","time_limit_s":10}`)
	require.Equal(t, http.StatusCreated, code, "%v", created)
	f.clock.Advance(20 * time.Second)
	item := `{"data_source":"timely/general","solution_str":"<answer>21</answer>","ground_truth":"21","extra_info":{"timer":"` +
		created["timer"].(string) + `","timer":{"speed_factor":1}}}`
	one := f.refusal(t, "/v1/score", item)
	batch := f.refusal(t, "/v1/score/batch", `{"items":[`+item+`]}`)
	assert.Equal(t, "duplicate_key", one.code)
	assert.Equal(t, "extra_info.timer", one.field)
	assert.Equal(t, "duplicate_key", batch.code)
	assert.Equal(t, "items[0].extra_info.timer", batch.field)
	first, second := strings.Index(item, `"timer"`)+1, strings.LastIndex(item, `"timer"`)+1
	shift := len(`{"items":[`)
	assert.Equal(t, fmt.Sprintf(`extra_info.timer: duplicate key "timer" at byte %d (first at byte %d); send each key once`,
		second, first), one.message)
	assert.Equal(t, fmt.Sprintf(`items[0].extra_info.timer: duplicate key "timer" at byte %d (first at byte %d); send each key once`,
		second+shift, first+shift), batch.message)
}

// TestOpenRLHFLabelTextIsChecked: a label that is JSON text in a string
// (a text column) is refused as the same label given as an object is; the
// bytes are counted in the label's text.
func TestOpenRLHFLabelTextIsChecked(t *testing.T) {
	f := newFixture(t, nil)
	for _, tc := range []struct{ name, text, field, message string }{
		{"the elapsed time", `{"ground_truth":"21","extra_info":{"elapsed_s":1,"elapsed_s":9,"time_limit_s":10}}`, "labels[1].extra_info.elapsed_s",
			`labels[1].extra_info.elapsed_s: in the label's text, duplicate key "elapsed_s" at byte 50 (first at byte 36); send each key once`},
		{"the ground truth, in case, after white space", "  {\"ground_truth\":\"21\",\"Ground_Truth\":\"20\"}", "labels[1].Ground_Truth",
			`labels[1].Ground_Truth: in the label's text, duplicate key "Ground_Truth" at byte 24 (the same as "ground_truth" at byte 4, ignoring case); send each key once`},
		{"an object without a ground truth", `{"answer":2,"answer":3}`, "labels[1].answer",
			`labels[1].answer: in the label's text, duplicate key "answer" at byte 13 (first at byte 2); send each key once`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"query":["<answer>21</answer>","<answer>21</answer>"],"labels":["21",` + strconv.Quote(tc.text) + `]}`
			assert.Equal(t, refusal{400, "duplicate_key", tc.field, tc.message}, f.refusal(t, "/v1/openrlhf", body))
		})
	}
	// Text that is not JSON, or holds no duplicate, is the label it was.
	code, out := f.do(t, "POST", "/v1/openrlhf", `{"query":["<answer>21</answer>","<answer>{a:1,a:2}</answer>"],"labels":[`+
		strconv.Quote(`{"ground_truth":"21","extra_info":{"elapsed_s":5,"time_limit_s":10}}`)+`,"{a:1,a:2}"]}`)
	require.Equal(t, 200, code, "%v", out)
	assert.Equal(t, []any{0.0, 0.0}, out["extra_logs"].(map[string]any)["failed"])
}

// TestObjectsPastTheMemberBound: the duplicate check keeps the names of
// the objects it reads, so an object may hold at most maxObjectMembers
// members: past that, every route answers 413, whichever member holds the
// object, a label's text included.
func TestObjectsPastTheMemberBound(t *testing.T) {
	f := newFixture(t, nil)
	code, created := f.do(t, "POST", "/v1/timers", `{"rollout_id":"many-1"}`)
	require.Equal(t, http.StatusCreated, code, "%v", created)
	tok := created["timer"].(string)
	object := func(members int) string {
		var b strings.Builder
		for i := range members {
			fmt.Fprintf(&b, `,"m%d":0`, i)
		}
		return "{" + b.String()[1:] + "}"
	}
	const bound = 1 << 16 // the documented bound, not the constant under test
	over := `{"other":` + object(bound+1) + `}`
	at := len(over) - len(`:0}}`)
	want := refusal{http.StatusRequestEntityTooLarge, "too_many_members", "other",
		fmt.Sprintf("other: an object with more than %d members (byte %d), the limit per object", bound, at)}
	for _, route := range postRoutes {
		path := strings.Replace(route, "{id}", tok, 1)
		assert.Equal(t, want, f.refusal(t, path, over), route)
		// At the bound, the object passes the check (the route may refuse
		// the body for what it means).
		code, out := f.do(t, "POST", path, `{"other":`+object(bound)+`}`)
		if code >= 400 {
			assert.NotEqual(t, "too_many_members", errorOf(t, out)["code"], route)
		}
	}

	text := object(bound + 1)
	body := `{"query":["<answer>21</answer>","<answer>21</answer>"],"labels":["21",` + strconv.Quote(text) + `]}`
	assert.Equal(t, refusal{http.StatusRequestEntityTooLarge, "too_many_members", "labels[1]",
		fmt.Sprintf("labels[1]: an object with more than %d members (byte %d of the label's text), the limit per object", bound, len(text)-len(`:0}`))},
		f.refusal(t, "/v1/openrlhf", body))
}
