package dataset

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	assert.Equal(t, string(want), string(got))
}

func TestJSONLGolden(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	data := writeAll(t, JSONL, mem, Options{}, testBatches)
	mem.AssertSize(t, 0)
	golden(t, "golden.jsonl", data)
}

// jsonlLines writes rec with the JSONL writer and returns its lines.
func jsonlLines(t *testing.T, rec arrow.Record) []string {
	t.Helper()
	var buf bytes.Buffer
	w, err := JSONL.NewWriter(&buf, rec.Schema(), Options{})
	require.NoError(t, err)
	require.NoError(t, w.Write(rec))
	require.NoError(t, w.Close())
	out := buf.String()
	require.True(t, strings.HasSuffix(out, "\n") || out == "")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, int(rec.NumRows()))
	return lines
}

// oneColumn makes a record with the single column "v".
func oneColumn(arr arrow.Array, nullable bool) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arr.DataType(), Nullable: nullable}}, nil)
	return array.NewRecord(schema, []arrow.Array{arr}, int64(arr.Len()))
}

func TestJSONLTypes(t *testing.T) {
	for _, tc := range []struct {
		name string
		typ  arrow.DataType
		in   string // the column, in Arrow's JSON
		want []string
	}{
		{"int8", arrow.PrimitiveTypes.Int8, `[-128, 0, 127, null]`, []string{"-128", "0", "127", "null"}},
		{"int16", arrow.PrimitiveTypes.Int16, `[-32768, 32767]`, []string{"-32768", "32767"}},
		{"int32", arrow.PrimitiveTypes.Int32, `[-2147483648, 2147483647]`, []string{"-2147483648", "2147483647"}},
		{"int64", arrow.PrimitiveTypes.Int64, `[-9223372036854775808, 9223372036854775807]`, []string{"-9223372036854775808", "9223372036854775807"}},
		{"uint8", arrow.PrimitiveTypes.Uint8, `[0, 255]`, []string{"0", "255"}},
		{"uint16", arrow.PrimitiveTypes.Uint16, `[65535]`, []string{"65535"}},
		{"uint32", arrow.PrimitiveTypes.Uint32, `[4294967295]`, []string{"4294967295"}},
		{"uint64", arrow.PrimitiveTypes.Uint64, `[18446744073709551615, null]`, []string{"18446744073709551615", "null"}},
		{"float32", arrow.PrimitiveTypes.Float32, `[0.1, 1, 16777216, -2.5, null]`, []string{"0.1", "1.0", "1.6777216e+07", "-2.5", "null"}},
		{"float64", arrow.PrimitiveTypes.Float64, `[0.1, 1, -0.0, 1e21, null]`, []string{"0.1", "1.0", "-0.0", "1e+21", "null"}},
		{"bool", arrow.FixedWidthTypes.Boolean, `[true, false, null]`, []string{"true", "false", "null"}},
		{"string", arrow.BinaryTypes.String, `["a", "", null]`, []string{`"a"`, `""`, "null"}},
		{"large string", arrow.BinaryTypes.LargeString, `["<&>", null]`, []string{`"<&>"`, "null"}},
		{"null", arrow.Null, `[null, null]`, []string{"null", "null"}},
		{"list", arrow.ListOf(arrow.PrimitiveTypes.Int64), `[[1, null, 3], [], null]`, []string{"[1,null,3]", "[]", "null"}},
		{"large list", arrow.LargeListOf(arrow.BinaryTypes.String), `[["x"], [], null]`, []string{`["x"]`, "[]", "null"}},
		{"list of lists", arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Float64)), `[[[1], [], null]]`, []string{"[[1.0],[],null]"}},
		{
			"struct",
			arrow.StructOf(
				arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
				arrow.Field{Name: "b", Type: arrow.ListOf(arrow.BinaryTypes.String), Nullable: true},
				arrow.Field{Name: `q"uote`, Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
			),
			`[{"a": 1, "b": ["x", null], "q\"uote": true}, {"a": null, "b": null, "q\"uote": null}, null]`,
			[]string{`{"a":1,"b":["x",null],"q\"uote":true}`, `{"a":null,"b":null,"q\"uote":null}`, "null"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			arr, _, err := array.FromJSON(mem, tc.typ, strings.NewReader(tc.in), array.WithUseNumber())
			require.NoError(t, err)
			defer arr.Release()
			rec := oneColumn(arr, true)
			defer rec.Release()

			lines := jsonlLines(t, rec)
			for i, line := range lines {
				assert.Equal(t, `{"v":`+tc.want[i]+`}`, line, "row %d", i)
			}
			assertRoundTrip(t, rec, lines)
		})
	}
}

// assertRoundTrip checks that each line decodes with encoding/json to the
// values of the record's row.
func assertRoundTrip(t *testing.T, rec arrow.Record, lines []string) {
	t.Helper()
	want := recordValues(rec)
	require.Len(t, lines, len(want))
	for i, line := range lines {
		require.True(t, json.Valid([]byte(line)), "invalid JSON: %s", line)
		var got map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &got))
		assert.Equal(t, want[i], got, "row %d: %s", i, line)
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for i, rows := range testBatches {
		rec := buildRecord(t, mem, rows)
		assertRoundTrip(t, rec, jsonlLines(t, rec))
		// The values are also the ones the rows were built from.
		lines := jsonlLines(t, rec)
		for r, line := range lines {
			var got map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &got))
			assert.Equal(t, rows[r].value(), got, "batch %d row %d", i, r)
		}
		rec.Release()
	}
}

func TestJSONLFloats(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		bits int
		want string
	}{
		{1, 64, "1.0"},
		{0, 64, "0.0"},
		{math.Copysign(0, -1), 64, "-0.0"},
		{-3, 64, "-3.0"},
		{100, 64, "100.0"},
		{0.5, 64, "0.5"},
		{1e21, 64, "1e+21"},
		{1e-7, 64, "1e-07"},
		{123456.5, 64, "123456.5"},
		{1e6, 64, "1e+06"},
		{math.MaxFloat64, 64, "1.7976931348623157e+308"},
		{math.SmallestNonzeroFloat64, 64, "5e-324"},
		{math.NaN(), 64, "null"},
		{math.Inf(1), 64, "null"},
		{math.Inf(-1), 64, "null"},
		{float64(float32(0.1)), 32, "0.1"},
		{1, 32, "1.0"},
		{math.MaxFloat32, 32, "3.4028235e+38"},
		{float64(float32(math.NaN())), 32, "null"},
		{math.Inf(1), 32, "null"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			got := string(appendFloat([]byte("x"), tc.in, tc.bits))
			assert.Equal(t, "x"+tc.want, got)
		})
	}
}

// TestJSONLFloatsProperty checks many floats: the text is a JSON number with
// a fraction or exponent that parses back to the same value.
func TestJSONLFloatsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(v float64, bits int) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return // null, see TestJSONLFloats
		}
		s := string(appendFloat(nil, v, bits))
		require.True(t, json.Valid([]byte(s)), "%v gives invalid JSON %q", v, s)
		require.True(t, strings.ContainsAny(s, ".e"), "%v gives %q, without a fraction or exponent", v, s)
		got, err := strconv.ParseFloat(s, bits)
		require.NoError(t, err)
		require.Equal(t, v, got, "%q", s)
	}
	for i := 0; i < 20000; i++ {
		check(math.Float64frombits(r.Uint64()), 64)
		check(float64(r.Int64N(1<<53)-1<<52), 64)
		check(float64(math.Float32frombits(r.Uint32())), 32)
		check(float64(float32(r.Int32N(1<<24))), 32)
	}
	for _, v := range []float64{0, 1, 10, 1e20, 1e21, 1e22, 1e-5, 1e-6, 1e-7, 9007199254740993, 0.1 + 0.2} {
		check(v, 64)
		check(-v, 64)
	}
}

func TestJSONLStrings(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"plain", "hello", `"hello"`},
		{"empty", "", `""`},
		{"quote", `say "hi"`, `"say \"hi\""`},
		{"backslash", `a\b`, `"a\\b"`},
		{"newline", "a\nb", `"a\nb"`},
		{"carriage return", "a\rb", `"a\rb"`},
		{"tab", "a\tb", `"a\tb"`},
		{"nul", "a\x00b", `"a\u0000b"`},
		{"backspace", "\b", `"\u0008"`},
		{"form feed", "\f", `"\u000c"`},
		{"unit separator", "\x1f", `"\u001f"`},
		{"del kept", "\x7f", "\"\x7f\""},
		{"html kept", `<a href="x">&amp;</a>`, `"<a href=\"x\">&amp;</a>"`},
		{"unicode kept", "é 世界 🎉", `"é 世界 🎉"`},
		{"line separator", "a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"invalid utf-8", "a\xffb", `"a\ufffdb"`},
		{"invalid bytes each replaced", "\xff\xfe", `"\ufffd\ufffd"`},
		{"truncated rune", "\xe4\xb8", `"\ufffd\ufffd"`},
		{"surrogate half", "\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},
		{"valid replacement char kept", "\ufffd", "\"\ufffd\""},
		{"all at once", "\"\\\n\x01<\u2028\xff", `"\"\\\n\u0001<\u2028\ufffd"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := string(AppendJSONString([]byte("x"), tc.in))
			assert.Equal(t, "x"+tc.want, got)
			checkJSONString(t, tc.in, got[1:])
		})
	}
}

// checkJSONString checks got, the encoding of s, against encoding/json:
// the same bytes as json.Encoder without HTML escaping (which writes \b and
// \f where the JSONL writer writes \u0008 and \u000c), and the same decoded
// string.
func checkJSONString(t *testing.T, s, got string) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(s))
	ref := strings.TrimSuffix(buf.String(), "\n")
	if !strings.ContainsAny(s, "\b\f") {
		assert.Equal(t, ref, got, "differs from encoding/json for %q", s)
	}
	require.True(t, json.Valid([]byte(got)), "invalid JSON %q", got)
	var want, dec string
	require.NoError(t, json.Unmarshal([]byte(ref), &want))
	require.NoError(t, json.Unmarshal([]byte(got), &dec))
	assert.Equal(t, want, dec)
	assert.Equal(t, string([]rune(s)), dec, "invalid UTF-8 is U+FFFD per byte")
	assert.NotContains(t, got, "\u2028")
	assert.NotContains(t, got, "\u2029")
	for _, c := range []byte(got) {
		assert.GreaterOrEqual(t, c, byte(0x20), "raw control character in %q", got)
	}
}

func TestJSONLStringsRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "\"", "\\", "\n", "\x00", "\x1f", "<", "&", "é", "世", "🎉", "\u2028", "\u2029", "\xff", "\xe4\xb8", "\b", "\f", "\x7f"}
	for i := 0; i < 5000; i++ {
		var sb strings.Builder
		for n := r.IntN(12); n > 0; n-- {
			sb.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := sb.String()
		checkJSONString(t, s, string(AppendJSONString(nil, s)))
	}
}

func FuzzJSONLString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\\n", "\x00\x1f\x7f", "<>&", "\u2028\u2029", "\xff", "é世🎉", "\b\f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := AppendJSONString(nil, s)
		if !json.Valid(got) {
			t.Fatalf("invalid JSON %q for %q", got, s)
		}
		var dec string
		if err := json.Unmarshal(got, &dec); err != nil {
			t.Fatal(err)
		}
		if want := string([]rune(s)); dec != want {
			t.Fatalf("%q decodes to %q, want %q", s, dec, want)
		}
		if !utf8.Valid(got) {
			t.Fatalf("output %q is not UTF-8", got)
		}
	})
}

func TestJSONLUnsupportedTypes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		field arrow.Field
	}{
		{"map", arrow.Field{Name: "meta", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.BinaryTypes.String)}},
		{"date32", arrow.Field{Name: "day", Type: arrow.FixedWidthTypes.Date32}},
		{"timestamp", arrow.Field{Name: "at", Type: arrow.FixedWidthTypes.Timestamp_us}},
		{"binary", arrow.Field{Name: "blob", Type: arrow.BinaryTypes.Binary}},
		{"decimal", arrow.Field{Name: "price", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}}},
		{"dictionary", arrow.Field{Name: "cat", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}}},
		{"fixed size list", arrow.Field{Name: "vec", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)}},
		{"list of dates", arrow.Field{Name: "days", Type: arrow.ListOf(arrow.FixedWidthTypes.Date32)}},
		{"large list of maps", arrow.Field{Name: "maps", Type: arrow.LargeListOf(arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64))}},
		{"struct with a date", arrow.Field{Name: "msg", Type: arrow.StructOf(
			arrow.Field{Name: "text", Type: arrow.BinaryTypes.String},
			arrow.Field{Name: "sent", Type: arrow.FixedWidthTypes.Date32},
		)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{
				{Name: "ok", Type: arrow.BinaryTypes.String},
				tc.field,
			}, nil)
			var buf bytes.Buffer
			w, err := JSONL.NewWriter(&buf, schema, Options{})
			require.Error(t, err)
			assert.Nil(t, w)
			assert.Contains(t, err.Error(), "field "+tc.field.Name+":")
			assert.Contains(t, err.Error(), "no JSON encoding")
			assert.Zero(t, buf.Len())
		})
	}
}

func TestJSONLRejectsOtherSchema(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		name  string
		field arrow.Field
	}{
		{"other name", arrow.Field{Name: "w", Type: arrow.PrimitiveTypes.Int64, Nullable: true}},
		{"other type", arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int32, Nullable: true}},
		{"other nullability", arrow.Field{Name: "v", Type: arrow.PrimitiveTypes.Int64}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
			var buf bytes.Buffer
			w, err := JSONL.NewWriter(&buf, schema, Options{})
			require.NoError(t, err)

			arr, _, err := array.FromJSON(mem, tc.field.Type, strings.NewReader(`[1, 2]`))
			require.NoError(t, err)
			defer arr.Release()
			rec := array.NewRecord(arrow.NewSchema([]arrow.Field{tc.field}, nil), []arrow.Array{arr}, 2)
			defer rec.Release()

			err = w.Write(rec)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "schema")
			require.NoError(t, w.Close())
			assert.Zero(t, buf.Len(), "nothing written for a rejected record")
		})
	}
}

func TestJSONLSpecialValuesRoundTrip(t *testing.T) {
	// NaN and infinities become null; invalid UTF-8 becomes U+FFFD; the
	// round trip through encoding/json agrees with the Arrow values.
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "f", Type: arrow.PrimitiveTypes.Float64},
		{Name: "g", Type: arrow.PrimitiveTypes.Float32},
		{Name: "s", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	b.Field(0).(*array.Float64Builder).AppendValues([]float64{math.NaN(), math.Inf(1), math.Inf(-1), 1, 2.5e-300}, nil)
	b.Field(1).(*array.Float32Builder).AppendValues([]float32{float32(math.NaN()), float32(math.Inf(-1)), 0.1, 3, 1e30}, nil)
	b.Field(2).(*array.StringBuilder).AppendValues([]string{"\xff", "ok\xc0\xafok", "\u2028", "<script>", "tab\t"}, nil)
	rec := b.NewRecord()
	defer rec.Release()

	lines := jsonlLines(t, rec)
	assert.Equal(t, []string{
		`{"f":null,"g":null,"s":"\ufffd"}`,
		`{"f":null,"g":null,"s":"ok\ufffd\ufffdok"}`,
		`{"f":null,"g":0.1,"s":"\u2028"}`,
		`{"f":1.0,"g":3.0,"s":"<script>"}`,
		`{"f":2.5e-300,"g":1e+30,"s":"tab\t"}`,
	}, lines)
	assertRoundTrip(t, rec, lines)
}
