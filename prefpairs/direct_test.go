package prefpairs

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadDirectAnswers(t *testing.T) {
	in := `{"id":"a_1","direct_answer":"shared"}

{"id":"a_1","elapse":2,"direct_answer":"for level 2"}
{"id":"b_1","elapse":null,"direct_answer":"b"}
`
	d, err := ReadDirectAnswers(strings.NewReader(in), "d.jsonl")
	require.NoError(t, err)
	assert.Equal(t, 3, d.Len())
	for _, tt := range []struct {
		key  SampleKey
		want string
		ok   bool
	}{
		{SampleKey{"a_1", 0}, "shared", true},
		{SampleKey{"a_1", 2}, "for level 2", true},
		{SampleKey{"b_1", 1}, "b", true},
		{SampleKey{"c_1", 0}, "", false},
	} {
		got, ok := d.Lookup(tt.key)
		assert.Equal(t, tt.ok, ok, tt.key)
		assert.Equal(t, tt.want, got, tt.key)
	}
	// An entry for level 0 is for that level alone.
	d, err = ReadDirectAnswers(strings.NewReader(`{"id":"z_1","elapse":0,"direct_answer":"zero"}`), "d.jsonl")
	require.NoError(t, err)
	assert.Equal(t, 1, d.Len())
	got, ok := d.Lookup(SampleKey{"z_1", 0})
	assert.True(t, ok)
	assert.Equal(t, "zero", got)
	for _, k := range []int{1, 2} {
		_, ok := d.Lookup(SampleKey{"z_1", k})
		assert.False(t, ok, "level %d", k)
	}

	var none *DirectAnswers
	_, ok = none.Lookup(SampleKey{"a_1", 0})
	assert.False(t, ok)
	assert.Zero(t, none.Len())
}

func TestReadDirectAnswersErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bad json", `{"id":`, "d.jsonl: line 1: invalid JSON"},
		{"missing id", `{"direct_answer":"x"}`, "d.jsonl: line 1: id: missing or empty"},
		{"id not string", `{"id":5,"direct_answer":"x"}`, "d.jsonl: line 1: id: want a string, got 5"},
		{"empty answer", `{"id":"a_1","direct_answer":"  "}`, "d.jsonl: line 1 (id a_1): direct_answer: missing or empty"},
		{"missing answer", `{"id":"a_1"}`, "line 1 (id a_1): direct_answer: missing or empty"},
		{"bad elapse", `{"id":"a_1","elapse":3,"direct_answer":"x"}`, "line 1 (id a_1): elapse: 3 is not 0, 1 or 2"},
		{"negative elapse", `{"id":"a_1","elapse":-1,"direct_answer":"x"}`, "line 1 (id a_1): elapse: -1 is not 0, 1 or 2"},
		{"elapse as string", `{"id":"a_1","elapse":"1","direct_answer":"x"}`, `elapse: "1" is not 0, 1 or 2`},
		{"duplicate", "{\"id\":\"a_1\",\"direct_answer\":\"x\"}\n{\"id\":\"a_1\",\"direct_answer\":\"y\"}", "d.jsonl: line 2 (id a_1): duplicate entry (first given on line 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadDirectAnswers(strings.NewReader(tt.in), "d.jsonl")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func FuzzReadDirectAnswers(f *testing.F) {
	f.Add([]byte(`{"id":"a_1","direct_answer":"x"}`))
	f.Add([]byte("{\"id\":\"a_1\",\"elapse\":1,\"direct_answer\":\"x\"}\n\n{\"id\":\"b\",\"direct_answer\":\"\\u00e9\"}"))
	f.Add([]byte(`{"id":"a_1","elapse":7}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadDirectAnswers(strings.NewReader(string(data)), "f.jsonl")
		if err != nil {
			return
		}
		for k, v := range d.byKey {
			if k.Elapse < 0 || k.Elapse > 2 || strings.TrimSpace(v) == "" || k.ID == "" {
				t.Fatalf("invalid entry %v=%q", k, v)
			}
		}
		for id, v := range d.byID {
			if strings.TrimSpace(v) == "" || id == "" {
				t.Fatalf("invalid entry %q=%q", id, v)
			}
		}
	})
}
