package conversation

import (
	"fmt"
	"reflect"
	"testing"
)

func TestZZDiff(t *testing.T) {
	vals := []string{`1E400`, `-0`, `0e0`, `0.0e-0`, `1e+0`, `-1.5E-7`, `123456789012345678901234567890`, `[]`, `{}`, `""`, `"\u0000"`, `"\ud800"`, `[1,[2,[3]]]`, `{"a":{"b":[]}}`, `true`, `false`, `null`, `"\/"`, `"é"`, `"\uFFFF"`, `"\uDBFF\uDFFF"`, `"` + "\u2028" + `"`, "\"\x7f\""}
	keys := []string{"id", "function", "tools", "pref_score", "preference", "direct_answer", "tool_call", "zz", "", "ſ", "\\u017f", "K", "\u212a"}
	bad := 0
	for _, k := range keys {
		for _, v := range vals {
			for _, tmpl := range []string{
				`{"%s":%s}`,
				`{"history":[{"role":"user","%s":%s}]}`,
				`{"history":[{"role":"assistant","tool_calls":[{"%s":%s,"function":{"name":"f"}}]}]}`,
				`{"history":[{"role":"assistant","tool_calls":[{"function":{"name":"f","%s":%s}}]}]}`,
				`{"history":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":{"%s":%s}}}]}]}`,
				`{"history":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":%[2]s}}]}],"%[1]s":1}`,
				`{"history":[{"role":"user","time":%[2]s,"content":%[2]s}],"%[1]s":1}`,
				`{"scenario":%[2]s,"%[1]s":1}`,
			} {
				in := []byte(fmt.Sprintf(tmpl, k, v))
				var a wireRecord
				if decodeRecord(in, &a) != nil {
					continue
				}
				b, err := generalDecode(in)
				if err != nil || !reflect.DeepEqual(a, b) {
					bad++
					t.Errorf("%s: err=%v\nfast %#v\ngen  %#v", in, err, a, b)
				}
			}
		}
	}
}
