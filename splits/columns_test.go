package splits

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		segs []string
		role string
		err  string
	}{
		{raw: "prompt", segs: []string{"prompt"}},
		{raw: "reward_model.ground_truth", segs: []string{"reward_model", "ground_truth"}},
		{raw: " prompt : user ", segs: []string{"prompt"}, role: "user"},
		{raw: "a . b:assistant", segs: []string{"a", "b"}, role: "assistant"},
		{raw: "a:b:user", segs: []string{"a:b"}, role: "user", err: ""},
		{raw: "", err: `column "": empty name`},
		{raw: "  ", err: `column "  ": empty name`},
		{raw: ":user", err: `column ":user": empty name`},
		{raw: "prompt:", err: `column "prompt:": empty role after ':'`},
		{raw: "prompt: ", err: `column "prompt: ": empty role after ':'`},
		{raw: "a..b", err: `column "a..b": empty field name`},
		{raw: ".a", err: `column ".a": empty field name`},
		{raw: "a. ", err: `column "a. ": empty field name`},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			p, err := parsePath(tc.raw)
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, colPath{raw: tc.raw, segs: tc.segs, role: tc.role}, p)
		})
	}
}

func TestColumnsCompile(t *testing.T) {
	cols := Columns{Text: []string{"prompt:user", "meta.tags"}, ID: []string{"id", "elapse"}, Source: "src",
		Group: "g.name", Split: "split", Sensitivity: "sens", Label: "label"}
	cc, err := cols.compile()
	require.NoError(t, err)
	var raws []string
	for _, p := range cc.paths() {
		raws = append(raws, p.raw)
	}
	assert.Equal(t, []string{"prompt:user", "meta.tags", "id", "elapse", "src", "g.name", "split", "sens", "label"}, raws,
		"text, ids, then source, group, split, sensitivity and label")
	assert.Equal(t, "user", cc.text[0].role)
	assert.Equal(t, []string{"g", "name"}, cc.group.segs)

	// Columns not named are not read.
	cc, err = (&Columns{Text: []string{"q"}}).compile()
	require.NoError(t, err)
	require.Len(t, cc.paths(), 1)
	assert.Nil(t, cc.source)
	assert.Nil(t, cc.group)
	assert.Nil(t, cc.split)
	assert.Nil(t, cc.sensitivity)
	assert.Nil(t, cc.lb)

	for _, tc := range []struct {
		name string
		cols Columns
		want string
	}{
		{"no text", Columns{}, "splits: no text column"},
		{"bad text", Columns{Text: []string{"q", ":x"}}, `splits: text column ":x": empty name`},
		{"bad id", Columns{Text: []string{"q"}, ID: []string{"a..b"}}, `splits: id column "a..b": empty field name`},
		{"role on an id", Columns{Text: []string{"q"}, ID: []string{"a:user"}}, `splits: id column "a:user": a role filter needs a text column`},
		{"bad source", Columns{Text: []string{"q"}, Source: "a."}, `splits: source column "a.": empty field name`},
		{"role on the source", Columns{Text: []string{"q"}, Source: "a:user"}, `splits: source column "a:user": a role filter needs a text column`},
		{"bad group", Columns{Text: []string{"q"}, Group: "a:"}, `splits: group column "a:": empty role after ':'`},
		{"role on the group", Columns{Text: []string{"q"}, Group: "a:user"}, `splits: group column "a:user": a role filter needs a text column`},
		{"bad split", Columns{Text: []string{"q"}, Split: ".s"}, `splits: split column ".s": empty field name`},
		{"role on the split", Columns{Text: []string{"q"}, Split: "s:user"}, `splits: split column "s:user": a role filter needs a text column`},
		{"bad sensitivity", Columns{Text: []string{"q"}, Sensitivity: " "}, `splits: sensitivity column " ": empty name`},
		{"role on the sensitivity", Columns{Text: []string{"q"}, Sensitivity: "s:user"}, `splits: sensitivity column "s:user": a role filter needs a text column`},
		{"bad label", Columns{Text: []string{"q"}, Label: "l..x"}, `splits: label column "l..x": empty field name`},
		{"role on the label", Columns{Text: []string{"q"}, Label: "l:user"}, `splits: label column "l:user": a role filter needs a text column`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc, err := tc.cols.compile()
			assert.Nil(t, cc)
			assert.EqualError(t, err, tc.want)
		})
	}
}
