package puzzles

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateBenchInput = flag.Bool("update", false, "rewrite testdata/published_bench.json.gz, the published-format input of BenchmarkImportPublished")

// benchInputPath is a published-format file of 700 records made by
// publishedBenchInput, read by BenchmarkImportPublished.
const benchInputPath = "testdata/published_bench.json.gz"

// publishedBenchRanges are the year ranges of the benchmark's records, as
// in the published set: most over 1800–2050, the rest over narrower
// ranges; each with its count, seed and solution counts.
var publishedBenchRanges = []struct {
	from, to, count int
	seed            uint64
	minSol          int
}{
	{1800, 2050, 400, 11, 0},
	{1900, 2030, 120, 12, 1},
	{1950, 2050, 120, 13, 0},
	{1850, 1950, 60, 14, 1},
}

// publishedBenchInput makes the benchmark's records: puzzles of the
// generator (disputed lunar data allowed, as the published generator knows
// none) written in the published format, each constraint as the published
// generator's type, and each answer the one the published generator's own
// readings give (the n-th lunar month with the leap month after it, Olympic
// and World Cup years by arithmetic, lifetimes and terms without their
// first and last day, no lunar date before 1900), so that a realistic
// share of records is wrong, undecidable or not converted.
func publishedBenchInput(t testing.TB) []map[string]any {
	var out []map[string]any
	for _, r := range publishedBenchRanges {
		opt := DefaultOptions()
		opt.Seed, opt.FromYear, opt.ToYear = r.seed, r.from, r.to
		opt.MinSolutions = r.minSol
		opt.Disputed = DisputedAllow
		g, err := NewGenerator(opt)
		require.NoError(t, err)
		im := importer{opt: &ImportOptions{KB: opt.KB, YearSets: opt.YearSets, Seasons: opt.Seasons}}
		u, err := newUniverse(r.from, r.to)
		require.NoError(t, err)
		im.to = r.to
		n := 0
		for i := int64(0); n < r.count; i++ {
			p, err := g.Generate(i)
			require.NoError(t, err)
			metas, texts, explicit := publishedMetas(t, opt.YearSets, p)
			if metas == nil {
				continue
			}
			// The published answer: every day where each constraint holds
			// under the published generator's readings.
			facts := make([]Fact, len(metas))
			cons := make([]constraint, len(metas))
			lunar := false
			for k, m := range metas {
				b, err := json.Marshal(m)
				require.NoError(t, err)
				var m meta
				require.NoError(t, json.Unmarshal(b, &m))
				facts[k], err = im.convert(m)
				require.NoError(t, err)
				cons[k] = readConstraint(m, &facts[k])
				lunar = lunar || isLunarKind(facts[k].Kind)
			}
			solutions := []string{}
			for _, d := range im.answerAs(u, cons, facts, []string{CauseLeapMonth, CauseYearSetRule, CauseBoundaryDays}) {
				if y, _, _ := civil(u.first + d); !lunar || y >= 1900 {
					solutions = append(solutions, formatDate(u.first+d))
				}
			}
			// One record in thirty has an answer no reading explains: a day
			// off.
			if len(out)%30 == 29 && len(solutions) > 0 {
				d, _ := parseDate(solutions[0])
				solutions[0] = formatDate(d + 1)
				solutions = setOf(solutions)
			}
			seed := ""
			if len(p.Solutions) > 0 {
				seed = p.Solutions[0]
			}
			out = append(out, map[string]any{
				"identifier": fmt.Sprintf("bench-%d", len(out)+1), "seed_date": seed, "noise_date": nil,
				"constraints": texts, "explicit_constraints": explicit, "constraints_meta": metas,
				"solutions": solutions, "solution_count": len(solutions), "year_range": []int{r.from, r.to},
			})
			n++
		}
	}
	return out
}

// publishedMetas writes the facts of p as published constraints, with
// their texts; nil when a fact has no published form (an event period
// that is neither a lifetime nor a presidency). A not-leap-year fact, which
// the published format cannot say, is left out.
func publishedMetas(t testing.TB, sets []YearSet, p *Puzzle) (metas []map[string]any, texts, explicit []string) {
	for i := range p.Facts {
		f := &p.Facts[i]
		var ms []map[string]any
		m := func(typ string, kv ...any) map[string]any {
			x := map[string]any{"type": typ}
			for k := 0; k < len(kv); k += 2 {
				x[kv[k].(string)] = kv[k+1]
			}
			return x
		}
		switch f.Kind {
		case KindYear:
			ms = append(ms, m("explicit_year", "value", f.Year))
		case KindDecade:
			ms = append(ms, m("decade", "value", f.Year))
		case KindLeapYear:
			if f.Leap {
				ms = append(ms, m("event", "name", "leap_year"))
			}
		case KindZodiac:
			ms = append(ms, m("chinese_zodiac", "value", f.Animal))
		case KindYearSet:
			k := slices.IndexFunc(sets, func(s YearSet) bool { return s.Event == f.Event })
			require.GreaterOrEqual(t, k, 0, f.Event)
			ms = append(ms, m("event", "name", sets[k].Name))
		case KindMonth:
			ms = append(ms, m("month", "value", f.Month, "name", monthNames[f.Month]))
		case KindSeason:
			ms = append(ms, m("season", "value", strings.ToUpper(f.Season[:1])+f.Season[1:]))
		case KindLunar:
			ms = append(ms, m("lunar_month", "value", f.Month))
		case KindWeekday:
			ms = append(ms, m("weekday", "value", weekdayNames[f.Weekday]))
		case KindNth:
			if f.N > 0 {
				ms = append(ms, m("weekday_in_month", "direction", "forward", "weekday", weekdayNames[f.Weekday], "n", f.N))
			} else {
				ms = append(ms, m("weekday_in_month", "direction", "backward", "weekday", weekdayNames[f.Weekday], "n", -f.N))
			}
		case KindDay:
			switch f.Day {
			case 1:
				ms = append(ms, m("first_day_of_month", "value", true))
			case -1:
				ms = append(ms, m("last_day_of_month", "value", true))
			default:
				ms = append(ms, m("day_of_month_specific", "value", f.Day))
			}
		case KindDayRange:
			op := "<"
			if f.Op == "after" {
				op = ">"
			}
			ms = append(ms, m("day_of_month", "operator", op, "value", f.Day))
		case KindWeekdays:
			var names []string
			for _, w := range f.Weekdays {
				names = append(names, weekdayNames[w])
			}
			ms = append(ms, m("multi_weekday", "value", names))
		case KindEvent:
			switch {
			case f.Relation == During && strings.HasPrefix(f.Event, "the lifetime of "):
				ms = append(ms, m("person_alive", "person", strings.TrimPrefix(f.Event, "the lifetime of ")))
			case f.Relation == During && strings.HasSuffix(f.Event, " presidency of the United States"):
				who := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(f.Event, " presidency of the United States"), "'s first"), "'s")
				ms = append(ms, m("us_president", "person", who))
			case f.Relation == During || f.Relation == DuringYears:
				return nil, nil, nil
			default:
				var y, mo, d int
				fmt.Sscanf(f.Start, "%d-%d-%d", &y, &mo, &d)
				kb := func(level string, v int) map[string]any {
					return m("kb_event", "event", f.Event, "aspect", "start", "level", level, "value", v)
				}
				if f.Relation != Anniversary {
					ms = append(ms, kb("year", y))
				}
				if f.Relation != SameYear {
					ms = append(ms, kb("month", mo))
				}
				if f.Relation == SameDay || f.Relation == Anniversary {
					ms = append(ms, kb("day", d))
				}
			}
		}
		// The published explicit texts are a sentence each; a long explicit
		// rendering of ours (a zodiac year's periods) is left as implicit.
		ex := p.Explicit[i]
		if len(ex) > 200 {
			ex = p.Constraints[i]
		}
		for range ms {
			texts = append(texts, p.Constraints[i])
			explicit = append(explicit, ex)
		}
		metas = append(metas, ms...)
	}
	return metas, texts, explicit
}

// TestPublishedBenchInput keeps the benchmark's input in the published
// format and covering every published constraint type; -update writes it
// again from the generator.
func TestPublishedBenchInput(t *testing.T) {
	if *updateBenchInput {
		recs := publishedBenchInput(t)
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		require.NoError(t, err)
		_, err = zw.Write([]byte("[\n"))
		require.NoError(t, err)
		for i, r := range recs {
			if i > 0 {
				_, err = zw.Write([]byte(",\n"))
				require.NoError(t, err)
			}
			line, err := json.Marshal(r)
			require.NoError(t, err)
			_, err = zw.Write(line)
			require.NoError(t, err)
		}
		_, err = zw.Write([]byte("\n]\n"))
		require.NoError(t, err)
		require.NoError(t, zw.Close())
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(benchInputPath, b.Bytes(), 0o644))
	}
	data := readBenchInput(t)
	var recs []struct {
		Meta      []struct{ Type string } `json:"constraints_meta"`
		Solutions []string                `json:"solutions"`
		YearRange []int                   `json:"year_range"`
	}
	require.NoError(t, json.Unmarshal(data, &recs))
	assert.Len(t, recs, 700)
	types := map[string]bool{}
	for _, r := range recs {
		require.Len(t, r.YearRange, 2)
		require.NotNil(t, r.Solutions)
		for _, m := range r.Meta {
			types[m.Type] = true
		}
	}
	for _, typ := range []string{"explicit_year", "decade", "month", "day_of_month_specific", "first_day_of_month",
		"last_day_of_month", "weekday", "multi_weekday", "weekday_in_month", "day_of_month", "season", "chinese_zodiac",
		"lunar_month", "event", "person_alive", "us_president", "kb_event"} {
		assert.True(t, types[typ], "no constraint of type %s", typ)
	}
}
