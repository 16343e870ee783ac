package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manyKeys is an object with n distinct names k0, k1, ... and then extra.
func manyKeys(n int, extra string) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(extra + "}")
	return b.String()
}

func TestSkipValueRefusesDuplicates(t *testing.T) {
	tests := []struct {
		name, in   string
		field, msg string // "" when accepted
	}{
		{"top level", `{"timer":"a","timer":"b"}`, "timer", `duplicate key "timer" at byte 14 (first at byte 2)`},
		{"case", `{"timer":"a","Timer":"b"}`, "Timer", `duplicate key "Timer" at byte 14 (the same as "timer" at byte 2, ignoring case)`},
		{"escaped", `{"timer":1, "tim\u0065r":2}`, "timer", `duplicate key "timer" at byte 13 (first at byte 2)`},
		{"kelvin sign", `{"kind":1,"\u212aind":2}`, "\u212aind", "duplicate key \"\u212aind\" at byte 11 (the same as \"kind\" at byte 2, ignoring case)"},
		{"kelvin sign first", "{\"\u212aind\":1,\"KIND\":2}", "KIND", "duplicate key \"KIND\" at byte 13 (the same as \"\u212aind\" at byte 2, ignoring case)"},
		{"long s", `{"ſeconds":1,"SECONDS":2}`, "SECONDS", `duplicate key "SECONDS" at byte 15 (the same as "ſeconds" at byte 2, ignoring case)`},
		{"non-ASCII case", `{"état":1,"ÉTAT":2}`, "ÉTAT", `duplicate key "ÉTAT" at byte 12 (the same as "état" at byte 2, ignoring case)`},
		{"nested", `{"items":[{},{"x":1},{"a":[1,{"b":{"timer":1,"timer":2}}]}]}`, "items[2].a[1].b.timer", `duplicate key "timer" at byte 46 (first at byte 36)`},
		{"in an array", `[0,{"a":1,"a":2}]`, "[1].a", `duplicate key "a" at byte 11 (first at byte 5)`},
		{"after a nested object", `{"a":{"b":1,"c":2},"d":3,"a":4}`, "a", `duplicate key "a" at byte 26 (first at byte 2)`},
		{"a name with a dot", `{"x.y":{"z":1,"z":2}}`, "x.y.z", `duplicate key "z" at byte 15 (first at byte 9)`},
		{"large object, late", manyKeys(40, `"k39":0`), "k39", ``},
		{"large object, early", manyKeys(40, `"K3":0`), "K3", ``},
		{"large object, at the switch", manyKeys(16, `"k0":0`), "k0", ``},
		{"large object in large object", `{"o":` + manyKeys(20, `"k1":0`) + `}`, "o.k1", ``},
		{"the same names in siblings", `[{"a":1,"b":2},{"a":1,"b":2}]`, "", ""},
		{"the same names at two levels", `{"a":{"a":{"a":1}},"b":[{"a":1}]}`, "", ""},
		{"large siblings", `[` + manyKeys(20, `"x":0`) + `,` + manyKeys(20, `"x":0`) + `]`, "", ""},
		{"names differing past folding", `{"ss":1,"ß":2,"k":3,"K\u0301":4,"i":5,"ı":6}`, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Scanner{RefuseDuplicates: true}
			s.Reset([]byte(tc.in))
			err := s.SkipValue(0)
			if tc.field == "" {
				require.NoError(t, err)
				assert.Equal(t, End, s.Peek())
				return
			}
			var dup *DuplicateKeyError
			require.ErrorAs(t, err, &dup)
			assert.Equal(t, tc.field, dup.Field(""))
			if tc.msg != "" {
				assert.EqualError(t, err, tc.msg)
			}
			// The offsets are those of the two names' opening quotes.
			assert.Equal(t, byte('"'), tc.in[dup.Offset-1])
			assert.Equal(t, byte('"'), tc.in[dup.FirstOffset-1])
			assert.False(t, errors.As(err, new(SyntaxError)), "a duplicate is no syntax error")

			// Without the option the same text is accepted.
			var lax Scanner
			lax.Reset([]byte(tc.in))
			require.NoError(t, lax.SkipValue(0))
		})
	}
}

func TestDuplicateKeyFieldPrefix(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"a":2}`:             "items[3].a",
		`{"b":{"a":1,"a":2}}`:       "items[3].b.a",
		`[{"a":1,"a":2}]`:           "items[3][0].a",
		`[[{"a":1},{"a":1,"A":2}]]`: "items[3][0][1].A",
	} {
		s := Scanner{RefuseDuplicates: true}
		s.Reset([]byte(in))
		var dup *DuplicateKeyError
		require.ErrorAs(t, s.SkipValue(0), &dup, in)
		assert.Equal(t, want, dup.Field("items[3]"), in)
	}
}

// TestReadKeyMemberByMember reads objects the way the record decoders do:
// the caller walks the members, skipping some values; a duplicate, in its
// objects or in the values it skips, is named from the outermost value.
func TestReadKeyMemberByMember(t *testing.T) {
	// readObject reads an object member by member; the values of members
	// named "sub" are read the same way, any other is skipped.
	var readObject func(s *Scanner) error
	readObject = func(s *Scanner) error {
		if err := s.Expect('{', "at object"); err != nil {
			return err
		}
		if s.Peek() == '}' {
			s.Skip(1)
			return nil
		}
		obj := s.BeginObject()
		for {
			start := s.Pos()
			if s.Peek() != '"' {
				return s.SyntaxError("at key")
			}
			key, err := s.ReadKey(obj)
			if err != nil {
				return err
			}
			if err := s.Expect(':', "after key"); err != nil {
				return err
			}
			if string(key) == "sub" {
				err = readObject(s)
			} else if string(key) == "list" {
				err = s.Expect('[', "at list")
				for i := 0; err == nil; i++ {
					if err = readObject(s); err != nil {
						err = s.InElement(err, i)
						break
					}
					var more bool
					if more, err = s.More(']', "in list"); !more {
						break
					}
				}
			} else {
				err = s.SkipValue(1)
			}
			if err != nil {
				return s.InMember(err, start)
			}
			more, err := s.More('}', "after member")
			if !more {
				s.EndObject(obj)
				return err
			}
		}
	}
	for _, tc := range []struct{ in, field string }{
		{`{"sub":{"a":1,"b":2},"sub":{}}`, "sub"},
		{`{"sub":{"a":1,"b":{"c":[{"d":1,"d":2}]}}}`, "sub.b.c[0].d"},
		{`{"list":[{"x":1},{"sub":{"y":1,"Y":2}}]}`, "list[1].sub.Y"},
		{`{"sub":{"a":1},"a":1,"list":[{"a":1},{"a":1}],"other":{"a":1}}`, ""},
		{`{"sub":{"a":1,"b":2},"s\u0075b":{}}`, "sub"},
	} {
		for _, refuse := range []bool{true, false} {
			s := Scanner{RefuseDuplicates: refuse}
			s.Reset([]byte(tc.in))
			err := readObject(&s)
			if tc.field == "" || !refuse {
				require.NoError(t, err, tc.in)
				assert.Empty(t, s.keys, "every object's names were dropped at its end")
				continue
			}
			var dup *DuplicateKeyError
			require.ErrorAs(t, err, &dup, tc.in)
			assert.Equal(t, tc.field, dup.Field(""), tc.in)
		}
	}
}

// TestLargeObjects: the names of an object past smallObject go into a
// table that grows as they come, and any of them, in any case, is found
// again; MaxMembers bounds them.
func TestLargeObjects(t *testing.T) {
	const n = 5000
	for _, again := range []int{0, 15, 16, 17, 47, 48, 1000, n - 1} {
		name := fmt.Sprintf("K%d", again)
		s := Scanner{RefuseDuplicates: true}
		s.Reset([]byte(manyKeys(n, `"`+name+`":0`)))
		var dup *DuplicateKeyError
		require.ErrorAs(t, s.SkipValue(0), &dup, name)
		assert.Equal(t, name, dup.Key)
		assert.Equal(t, fmt.Sprintf("k%d", again), dup.First)
	}
	s := Scanner{RefuseDuplicates: true}
	s.Reset([]byte(manyKeys(n, `"other":0`)))
	require.NoError(t, s.SkipValue(0))

	// Past tagIndexed slots, a growing table reads its names again.
	defer func(v int) { tagIndexed = v }(tagIndexed)
	tagIndexed = 64
	for _, again := range []int{0, 100, n - 1} {
		s.Reset([]byte(manyKeys(n, fmt.Sprintf(`"K%d":0`, again))))
		var dup *DuplicateKeyError
		require.ErrorAs(t, s.SkipValue(0), &dup)
		assert.Equal(t, fmt.Sprintf("K%d", again), dup.Key)
	}
	s.Reset([]byte(manyKeys(n, `"other":0`)))
	require.NoError(t, s.SkipValue(0))
	tagIndexed = 1 << tagBits

	for _, tc := range []struct {
		members, max int
		ok           bool
	}{
		{3, 3, true}, {4, 3, false}, {40, 40, true}, {41, 40, false}, {200, 0, true},
	} {
		s := Scanner{RefuseDuplicates: true, MaxMembers: tc.max}
		s.Reset([]byte(`[` + manyKeys(tc.members-1, `"last":0`) + `]`))
		err := s.SkipValue(0)
		if tc.ok {
			assert.NoError(t, err, "%d members, at most %d", tc.members, tc.max)
		} else {
			assert.ErrorIs(t, err, ErrTooManyMembers, "%d members, at most %d", tc.members, tc.max)
		}
	}
	// A duplicate within the bound is a duplicate.
	s = Scanner{RefuseDuplicates: true, MaxMembers: 3}
	s.Reset([]byte(`{"a":1,"b":2,"c":3,"A":4}`))
	assert.ErrorAs(t, s.SkipValue(0), new(*DuplicateKeyError))
}

// TestScannerReuseAfterDuplicate: a scanner reset after a refused object
// starts clean, and an object's names do not outlive it.
func TestScannerReuseAfterDuplicate(t *testing.T) {
	s := Scanner{RefuseDuplicates: true}
	s.Reset([]byte(`{"a":{"b":` + manyKeys(30, `"k2":1`) + `}}`))
	require.Error(t, s.SkipValue(0))
	s.Reset([]byte(`{"b":1,"k2":2}`))
	require.NoError(t, s.SkipValue(0), "the names of the refused text are gone")
	assert.Empty(t, s.keys)
	assert.Empty(t, s.tables)
}

// firstDuplicate is the oracle of the duplicate check: it walks data's
// first value with encoding/json's token reader and compares each name with
// the names before it in its object by strings.EqualFold. It returns the
// path of the first name met twice (as DuplicateKeyError.Field words it),
// the two spellings, and whether there is one before any syntax error.
func firstDuplicate(data []byte) (field, key, first string, found bool) {
	type frame struct {
		obj     bool
		wantKey bool
		names   []string
		key     string
		n       int
	}
	var stack []*frame
	valueDone := func() bool {
		if len(stack) == 0 {
			return true
		}
		if top := stack[len(stack)-1]; top.obj {
			top.wantKey = true
		} else {
			top.n++
		}
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", "", "", false
		}
		if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
			top := stack[n-1]
			if tok == json.Delim('}') {
				stack = stack[:n-1]
				if valueDone() {
					return "", "", "", false
				}
				continue
			}
			k := tok.(string)
			for _, name := range top.names {
				if strings.EqualFold(name, k) {
					var path strings.Builder
					for _, f := range stack[:n-1] {
						if f.obj {
							path.WriteString("." + f.key)
						} else {
							path.WriteString("[" + strconv.Itoa(f.n) + "]")
						}
					}
					return strings.TrimPrefix(path.String()+"."+k, "."), k, name, true
				}
			}
			top.names, top.key, top.wantKey = append(top.names, k), k, false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if valueDone() {
			return "", "", "", false
		}
	}
}

// FuzzRefuseDuplicates checks the duplicate check against firstDuplicate:
// the scanner refuses a text exactly when the oracle finds a name twice
// before any syntax error, and names the same member; the offsets point at
// the two names.
func FuzzRefuseDuplicates(f *testing.F) {
	for _, seed := range []string{
		`{"a":1,"a":2}`, `{"a":1,"A":2}`, `{"a":{"b":[1,{"c":1,"c":2}]}}`, `[{"a":1},{"a":1}]`, `{"k":1,"\u212a":2}`,
		`{"ſ":1,"S":2}`, `{"a":1,"b":{"a":1},"c":[{"a":1,"b":2}],"a":3}`, `{"a":1,"a" 2}`, `{"a":1,"b":2,` + `"a`,
		`{"\ud83d":1,"\ufffd":2}`, "{\"\xff\":1,\"\xfe\":2}", manyKeys(20, `"K19":1`), manyKeys(17, `"x":{"k1":1,"k1":2}`),
		`{"a":1} {"a":1,"a":2}`, `{"items":[{"extra_info":{"timer":"x","Timer":"y"}}]}`,
		manyKeys(100, `"K77":{"a":1,"A":2}`), manyKeys(100, `"x":{"a":1,"A":2}`),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		field, key, first, found := firstDuplicate(data)
		s := Scanner{RefuseDuplicates: true}
		s.Reset(data)
		err := s.SkipValue(0)
		var dup *DuplicateKeyError
		if !found {
			require.False(t, errors.As(err, &dup), "refused %q: %v", data, err)
			return
		}
		require.ErrorAs(t, err, &dup, "accepted %q; the oracle finds %q twice at %s", data, key, field)
		require.Equal(t, field, dup.Field(""))
		require.Equal(t, key, dup.Key)
		require.Equal(t, first, dup.First)
		for _, at := range []int{dup.FirstOffset, dup.Offset} {
			require.Equal(t, byte('"'), data[at-1])
		}
		require.Less(t, dup.FirstOffset, dup.Offset)
	})
}

// FuzzEqualFold checks the ASCII fast path of equalFold against
// strings.EqualFold.
func FuzzEqualFold(f *testing.F) {
	for _, pair := range [][2]string{
		{"timer", "Timer"}, {"timer", "timers"}, {"kind", "\u212aind"}, {"ſcore", "SCORE"}, {"a\xffb", "A\xffB"},
		{"", ""}, {"@", "`"}, {"[", "{"}, {"é", "É"}, {"ab", "a"}, {"K", "\u212a"},
	} {
		f.Add(pair[0], pair[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if got, want := equalFold([]byte(a), b), strings.EqualFold(a, b); got != want {
			t.Fatalf("equalFold(%q, %q) = %v, want %v", a, b, got, want)
		}
	})
}

// FuzzFoldHash: names equal under simple folding hash alike, which the
// duplicate check needs to compare them at all. The second name is the
// first with each character moved along its folding orbit.
func FuzzFoldHash(f *testing.F) {
	f.Add("timer", []byte{1})
	f.Add("kind of a long name, past eight bytes", []byte{1, 2, 0})
	f.Add("ſeconds ǅ ΣΑΣ ﬀ", []byte{2, 1})
	f.Fuzz(func(t *testing.T, name string, steps []byte) {
		if !utf8.ValidString(name) || len(steps) == 0 {
			return
		}
		var other []rune
		for i, r := range []rune(name) {
			for range steps[i%len(steps)] % 4 {
				r = unicode.SimpleFold(r)
			}
			other = append(other, r)
		}
		require.True(t, strings.EqualFold(name, string(other)))
		require.Equal(t, foldHash([]byte(name)), foldHash([]byte(string(other))), "%q and %q", name, string(other))
	})
}
