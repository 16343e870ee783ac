package budget

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func strp(s string) *string { return &s }

func TestParseTask(t *testing.T) {
	tests := []struct {
		name   string
		family Family
		line   string
		want   Task
	}{
		{"string answer, baseline", FamilyGeneral, `{"id":"a","question":"Q?","answer":"Paris","baseline_seconds":12.5}`,
			Task{ID: "a", Question: "Q?", Answer: strp("Paris"), BaselineSeconds: 12.5}},
		{"number answer keeps its literal", FamilyGeneral, `{"id":"a","question":"Q?","answer":7.50}`,
			Task{ID: "a", Question: "Q?", Answer: strp("7.50")}},
		{"null optionals are absent", FamilyGeneral, `{"id":"a","question":"Q?","answer":"x","baseline_seconds":null,"split":null,"steps":null}`,
			Task{ID: "a", Question: "Q?", Answer: strp("x")}},
		{"game fields", FamilyGame, `{"id":"g","question":"Play.","steps":50,"step_latency_s":1.5,"ability":"zork"}`,
			Task{ID: "g", Question: "Play.", Steps: 50, StepLatencyS: 1.5, Ability: "zork"}},
		{"ml fields and split", FamilyML, `{"id":"m","question":"Train.","rounds":3,"round_latency_s":40,"split":"test"}`,
			Task{ID: "m", Question: "Train.", Rounds: 3, RoundLatencyS: 40, Split: "test"}},
		{"an integer written with a fraction", FamilyGame, `{"id":"g","question":"Play.","steps":5.0}`,
			Task{ID: "g", Question: "Play.", Steps: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTask([]byte(tt.line), tt.family)
			require.NoError(t, err)
			assert.Equal(t, tt.want, *got)
		})
	}
}

func TestParseTaskErrors(t *testing.T) {
	tests := []struct {
		name   string
		family Family
		line   string
		id     string
		field  string
		msg    string
	}{
		{"not JSON", FamilyGeneral, `{"id":`, "", "", "invalid JSON at byte 6: the text ends inside a value"},
		{"an array", FamilyGeneral, `[1,2]`, "", "", "want an object, got a list"},
		{"null", FamilyGeneral, `null`, "", "", "want an object, got null"},
		{"missing id", FamilyGeneral, `{"question":"Q","answer":"a"}`, "", "id", "missing"},
		{"blank id", FamilyGeneral, `{"id":"  ","question":"Q","answer":"a"}`, "", "id", "missing"},
		{"numeric id", FamilyGeneral, `{"id":3,"question":"Q","answer":"a"}`, "", "id", "want a string"},
		{"unknown field", FamilyGeneral, `{"id":"a","question":"Q","answer":"x","baseline_secs":3}`, "a", "baseline_secs", "unknown field"},
		{"missing question", FamilyGeneral, `{"id":"a","answer":"x"}`, "a", "question", "missing"},
		{"general without answer", FamilyGeneral, `{"id":"a","question":"Q"}`, "a", "answer", "needs its reference answer"},
		{"null answer", FamilyGeneral, `{"id":"a","question":"Q","answer":null}`, "a", "answer", "missing"},
		{"empty answer", FamilyGeneral, `{"id":"a","question":"Q","answer":" "}`, "a", "answer", "empty"},
		{"bool answer", FamilyGeneral, `{"id":"a","question":"Q","answer":true}`, "a", "answer", "want a string or a number"},
		{"negative baseline", FamilyGeneral, `{"id":"a","question":"Q","answer":"x","baseline_seconds":-2}`, "a", "baseline_seconds", "not a positive number"},
		{"zero baseline", FamilyGeneral, `{"id":"a","question":"Q","answer":"x","baseline_seconds":0}`, "a", "baseline_seconds", "not a positive number"},
		{"huge baseline", FamilyGeneral, `{"id":"a","question":"Q","answer":"x","baseline_seconds":1e308}`, "a", "baseline_seconds", "up to 1e+07"},
		{"baseline as text", FamilyGeneral, `{"id":"a","question":"Q","answer":"x","baseline_seconds":"3"}`, "a", "baseline_seconds", "want a number"},
		{"steps on a general task", FamilyGeneral, `{"id":"a","question":"Q","answer":"x","steps":3}`, "a", "steps", "only a game task"},
		{"rounds on a game task", FamilyGame, `{"id":"a","question":"Q","rounds":3}`, "a", "rounds", "only a ml task"},
		{"fractional steps", FamilyGame, `{"id":"a","question":"Q","steps":2.5}`, "a", "steps", "not a whole number"},
		{"zero rounds", FamilyML, `{"id":"a","question":"Q","rounds":0}`, "a", "rounds", "not a whole number"},
		{"negative latency", FamilyML, `{"id":"a","question":"Q","round_latency_s":-1}`, "a", "round_latency_s", "not a positive number"},
		{"empty split", FamilyGeneral, `{"id":"a","question":"Q","answer":"x","split":""}`, "a", "split", "empty"},
		{"numeric ability", FamilyGeneral, `{"id":"a","question":"Q","answer":"x","ability":1}`, "a", "ability", "want a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTask([]byte(tt.line), tt.family)
			var le *LineError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, tt.id, le.ID)
			assert.Equal(t, tt.field, le.Field)
			assert.Contains(t, le.Err.Error(), tt.msg)
		})
	}
}

func TestTaskReader(t *testing.T) {
	long := strings.Repeat("word ", 40000)
	input := "\xef\xbb\xbf" + `{"id":"a","question":"Q1","answer":1}` + "\r\n" +
		"\n   \n" +
		`{"id":"b","question":"` + long + `","answer":"x"}` + "\n" +
		`{"id":"c","question":"Q3","answer":"y"}` // no final newline
	r := NewTaskReader(strings.NewReader(input), "tasks.jsonl", FamilyGeneral)
	var got []Task
	for {
		task, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got = append(got, *task)
	}
	require.Len(t, got, 3)
	assert.Equal(t, []string{"a", "b", "c"}, []string{got[0].ID, got[1].ID, got[2].ID})
	assert.Equal(t, []int{0, 1, 2}, []int{got[0].Record, got[1].Record, got[2].Record})
	assert.Equal(t, []int{1, 4, 5}, []int{got[0].Line, got[1].Line, got[2].Line})
	assert.Equal(t, long, got[1].Question, "a line longer than the read buffer arrives whole")
}

func TestTaskReaderErrorNamesFileLineIDAndField(t *testing.T) {
	input := `{"id":"a","question":"Q","answer":1}` + "\n\n" + `{"id":"broken","question":"Q","answer":"x","baseline_seconds":-1}` + "\n"
	r := NewTaskReader(strings.NewReader(input), "tasks.jsonl", FamilyGeneral)
	_, err := r.Next()
	require.NoError(t, err)
	_, err = r.Next()
	require.Error(t, err)
	assert.Equal(t, "budget: tasks.jsonl: line 3 (id broken): baseline_seconds: -1 is not a positive number of seconds up to 1e+07", err.Error())
}

func FuzzParseTask(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","question":"Q","answer":"x"}`,
		`{"id":"a","question":"Q","answer":42,"baseline_seconds":3.5}`,
		`{"id":"g","question":"Play","steps":5,"step_latency_s":2}`,
		`{"id":"m","question":"Train","rounds":2,"round_latency_s":30,"split":"test","ability":"ml"}`,
		`{"id":"a","question":"Q","answer":-1e400}`,
		`{"id":"a","id":"b","question":"Q","answer":"\u0000"}`,
		`[]`, `null`, `{`, ``,
	} {
		for _, fam := range []uint8{0, 1, 2} {
			f.Add([]byte(s), fam)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte, fam uint8) {
		family := Families[int(fam)%len(Families)]
		task, err := ParseTask(line, family)
		if err != nil {
			var le *LineError
			require.ErrorAs(t, err, &le)
			require.NotEmpty(t, le.Error())
			return
		}
		require.NotEmpty(t, strings.TrimSpace(task.ID))
		require.NotEmpty(t, strings.TrimSpace(task.Question))
		if family == FamilyGeneral {
			require.NotNil(t, task.Answer)
		}
		require.True(t, task.BaselineSeconds >= 0 && task.BaselineSeconds <= maxTaskSeconds)
		require.True(t, task.Steps >= 0 && task.Rounds >= 0)
		if family != FamilyGame {
			require.Zero(t, task.Steps)
			require.Zero(t, task.StepLatencyS)
		}
		if family != FamilyML {
			require.Zero(t, task.Rounds)
			require.Zero(t, task.RoundLatencyS)
		}
		opt := DefaultOptions(family)
		b, err := NewGenerator(opt)
		require.NoError(t, err)
		rows, err := b.Rows(task, nil)
		require.NoError(t, err)
		for _, r := range rows {
			require.True(t, r.TimeLimitS >= 0 && r.TimeLimitS <= maxTaskSeconds)
		}
	})
}

func FuzzTaskReader(f *testing.F) {
	f.Add([]byte("{\"id\":\"a\",\"question\":\"Q\",\"answer\":1}\n\n{\"id\":\"b\",\"question\":\"Q\",\"answer\":2}\r\n"))
	f.Add([]byte("\xef\xbb\xbf\n\n"))
	f.Add([]byte("{\"id\":\"a\"}\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewTaskReader(strings.NewReader(string(data)), "fuzz.jsonl", FamilyGeneral)
		prevLine := 0
		for i := 0; ; i++ {
			task, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var le *LineError
				require.ErrorAs(t, err, &le)
				require.Equal(t, "fuzz.jsonl", le.Name)
				require.Greater(t, le.Line, prevLine)
				return
			}
			require.Equal(t, i, task.Record)
			require.Greater(t, task.Line, prevLine)
			prevLine = task.Line
		}
	})
}
