package puzzles

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reference tables, relative to the package directory.
const (
	lunarMonthsCSV  = "../../../shared/data/lunar_months_1800_2050.csv"
	lunarNewYearCSV = "../../../shared/data/lunar_new_year_1800_2050.csv"
)

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err, "the reference tables live in ../shared/data")
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return rows[1:]
}

type refMonth struct {
	year, month, days, start int
	leap                     bool
}

func referenceMonths(t *testing.T) []refMonth {
	var out []refMonth
	for _, r := range readCSV(t, lunarMonthsCSV) {
		y, _ := strconv.Atoi(r[0])
		m, _ := strconv.Atoi(r[1])
		days, _ := strconv.Atoi(r[4])
		start, err := parseDate(r[3])
		require.NoError(t, err)
		out = append(out, refMonth{y, m, days, start, r[2] == "1"})
	}
	return out
}

func TestEmbeddedLunarTableEqualsReference(t *testing.T) {
	lt, err := lunar()
	require.NoError(t, err)
	ref := referenceMonths(t)
	require.Len(t, lt.months, len(ref))
	for i, r := range ref {
		m := lt.months[i]
		require.Equal(t, refMonth{m.year, m.month, m.days, m.start, m.leap}, r, "month %d", i)
	}
	for _, r := range readCSV(t, lunarNewYearCSV) {
		y, _ := strconv.Atoi(r[0])
		ny, err := parseDate(r[1])
		require.NoError(t, err)
		assert.Equal(t, ny, lt.months[lt.newYear[y-lt.firstYear]].start, r[1])
		assert.Equal(t, r[2], lt.animalOf(y))
	}
}

// TestLunarFactsAgreeWithReference checks the lunar-month and zodiac fact
// sets of a universe over the whole table, on the days around every month
// start, against the reference CSVs.
func TestLunarFactsAgreeWithReference(t *testing.T) {
	u, err := newUniverse(1801, 2050)
	require.NoError(t, err)
	require.True(t, u.lunarAny)
	ref := referenceMonths(t)
	in := func(f Fact, n int) bool {
		scratch := u.newScratch()
		return u.factSet(&f, &scratch).has(n - u.first)
	}
	inRange := func(n int) bool { return n >= u.first && n < u.first+u.n }
	checked := 0
	for i, r := range ref {
		fact := Fact{Kind: KindLunar, Month: r.month, Leap: r.leap}
		last := r.start + r.days - 1
		for _, n := range []int{r.start, r.start + 1, last} {
			if inRange(n) {
				require.True(t, in(fact, n), "%s is in lunar month %+v", formatDate(n), r)
				require.True(t, u.holds(&fact, n))
			}
		}
		for _, n := range []int{r.start - 1, last + 1} {
			if inRange(n) {
				require.False(t, in(fact, n), "%s is not in lunar month %+v", formatDate(n), r)
				require.False(t, u.holds(&fact, n))
			}
		}
		if i > 0 && inRange(r.start-1) {
			p := ref[i-1]
			require.True(t, in(Fact{Kind: KindLunar, Month: p.month, Leap: p.leap}, r.start-1))
			checked++
		}
	}
	assert.Greater(t, checked, 3000)
	ny := readCSV(t, lunarNewYearCSV)
	for i, r := range ny {
		start, _ := parseDate(r[1])
		z := Fact{Kind: KindZodiac, Animal: r[2]}
		for _, n := range []int{start, start + 1} {
			if inRange(n) {
				require.True(t, in(z, n), "%s is a year of the %s", formatDate(n), r[2])
			}
		}
		if inRange(start - 1) {
			require.False(t, in(z, start-1), "%s is before the year of the %s", formatDate(start-1), r[2])
			require.True(t, in(Fact{Kind: KindZodiac, Animal: ny[i-1][2]}, start-1))
		}
	}
}

// shiftedLunar returns a copy of the embedded table with month i starting
// delta days later (the month before it grows by delta).
func shiftedLunar(t *testing.T, i, delta int) *lunarTable {
	lt, err := lunar()
	require.NoError(t, err)
	alt := *lt
	alt.months = slices.Clone(lt.months)
	alt.months[i].start += delta
	alt.months[i].days -= delta
	alt.months[i-1].days += delta
	return &alt
}

// TestDisputedLunarDataDecidesNoAnswer generates puzzles over ranges holding
// disputed months and years and solves each again on calendars where a
// disputed month starts a day earlier or later, and a disputed new year a
// whole month earlier or later: the answers never change.
func TestDisputedLunarDataDecidesNoAnswer(t *testing.T) {
	lt, err := lunar()
	require.NoError(t, err)
	type shift struct{ month, delta int }
	var shifts []shift // month starts that may move, and by how much
	for _, r := range DefaultDisputedMonths() {
		shifts = append(shifts, shift{lt.find(r), -1}, shift{lt.find(r), 1})
	}
	for _, y := range DefaultDisputedYears() {
		i := lt.newYear[y-lt.firstYear]
		shifts = append(shifts, shift{i, -lt.months[i-1].days}, shift{i, lt.months[i].days})
	}
	for _, years := range [][2]int{{1930, 1980}, {1801, 1830}, {1880, 1910}} {
		opt := testOptions(21, func(o *Options) {
			o.FromYear, o.ToYear, o.MinSolutions = years[0], years[1], 0
		})
		g, err := NewGenerator(opt)
		require.NoError(t, err)
		require.NotEmpty(t, g.sh.disputes.groups)
		var alts []*universe
		for _, s := range shifts {
			alt, err := newUniverseWith(years[0], years[1], shiftedLunar(t, s.month, s.delta))
			require.NoError(t, err)
			alts = append(alts, alt)
		}
		lunar := 0
		for i := range int64(300) {
			p, err := g.Generate(i)
			require.NoError(t, err)
			if slices.ContainsFunc(p.Facts, func(f Fact) bool { return f.Kind == KindLunar || f.Kind == KindZodiac }) {
				lunar++
			}
			for _, alt := range alts {
				require.Equal(t, p.Solutions, solveOn(alt, p.Facts), "years %v puzzle %d", years, i)
			}
		}
		assert.Greater(t, lunar, 100, "years %v: puzzles with lunar facts", years)
	}
}

func solveOn(u *universe, facts []Fact) []string {
	a := u.newScratch()
	a.copyFrom(&u.full)
	for i := range facts {
		scratch := u.newScratch()
		a.and(u.factSet(&facts[i], &scratch))
	}
	out := []string{}
	a.members(func(i int) { out = append(out, formatDate(u.first+i)) })
	return out
}

// TestDisputedDaysAreMarked pins which days the defaults dispute: the day
// before and the first day of a disputed month (its start may move a day
// either way), and for a disputed year the month before its new year and
// its first month (the new year may move a new moon either way), not the
// rest of the year; and that an empty dispute list, or the allow policy,
// disputes none.
func TestDisputedDaysAreMarked(t *testing.T) {
	g, err := NewGenerator(testOptions(1, func(o *Options) { o.FromYear, o.ToYear = 1801, 2050 }))
	require.NoError(t, err)
	u := g.sh.u
	idx := func(d string) int {
		n, err := parseDate(d)
		require.NoError(t, err)
		return n - u.first
	}
	disputed := []string{
		"1933-07-22", "1933-07-23", "1954-11-24", "1954-11-25", "1956-12-01", "1956-12-02", "1978-09-02", "1978-09-03",
		// 1808's new year is 1808-01-28; the month before began 1807-12-29,
		// the one after 1808-02-26.
		"1807-12-29", "1808-01-27", "1808-01-28", "1808-02-25",
		"1889-12-22", "1890-02-01", "1890-02-18", // 1890: 1889-12-22, 1890-01-21, 1890-02-19
	}
	for _, d := range disputed {
		assert.True(t, g.sh.disputes.days.has(idx(d)), d)
	}
	for _, d := range []string{"1933-07-21", "1933-07-24", "1933-06-23", "1807-12-28", "1808-02-26", "1808-06-01", "1890-02-19", "1890-06-01", "1889-12-21"} {
		assert.False(t, g.sh.disputes.days.has(idx(d)), d)
	}
	assert.Len(t, g.sh.disputes.groups, 8)
	g, err = NewGenerator(testOptions(1, func(o *Options) { o.DisputedYears, o.DisputedMonths = nil, nil }))
	require.NoError(t, err)
	assert.Empty(t, g.sh.disputes.groups)
	g, err = NewGenerator(testOptions(1, func(o *Options) { o.Disputed = DisputedAllow }))
	require.NoError(t, err)
	assert.Nil(t, g.sh.disputes)
}

var debianLunarLine = regexp.MustCompile(`Lunar : (\d+)\.(\d+)(Leap)?\.(\d+)\.\S+\s+ShengXiao: (\w+)`)

// requireDebianTool finds a program of a Debian package the tests compare
// against. CI installs them and sets TIMEAWARE_REQUIRE_DEBIAN_TOOLS=1, so
// there a missing one fails the test; elsewhere it skips.
func requireDebianTool(t *testing.T, name, pkg string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		missingDebianTool(t, name, pkg)
	}
	return bin
}

// missingDebianTool fails (in CI) or skips a test for want of a Debian
// package's program or file.
func missingDebianTool(t *testing.T, what, pkg string) {
	t.Helper()
	if os.Getenv("TIMEAWARE_REQUIRE_DEBIAN_TOOLS") == "1" {
		t.Fatalf("%s is not installed (apt-get install %s), and TIMEAWARE_REQUIRE_DEBIAN_TOOLS=1", what, pkg)
	}
	t.Skipf("%s is not installed (apt-get install %s)", what, pkg)
}

// TestLunarAgreesWithDebianLunar compares the start of every lunar month
// of 1900-2049 (the first day's date, and the day before's month) with
// Debian's lunar program (apt-get install lunar; CI installs it): every
// one agrees but the four disputed month starts.
func TestLunarAgreesWithDebianLunar(t *testing.T) {
	bin := requireDebianTool(t, "lunar", "lunar")
	lt, err := lunar()
	require.NoError(t, err)
	type verdict struct {
		year, month, day int
		leap             bool
		animal           string
	}
	// ask runs lunar for day n; it only returns errors, so the workers
	// below never call into testing.
	ask := func(n int) (verdict, error) {
		y, m, d := civil(n)
		out, err := exec.Command(bin, strconv.Itoa(y), strconv.Itoa(m), strconv.Itoa(d)).Output()
		if err != nil {
			return verdict{}, fmt.Errorf("lunar %s: %w", formatDate(n), err)
		}
		g := debianLunarLine.FindStringSubmatch(string(out))
		if g == nil {
			return verdict{}, fmt.Errorf("lunar output for %s: %q", formatDate(n), out)
		}
		v := verdict{leap: g[3] != "", animal: g[5]}
		if v.animal == "Mouse" { // lunar's name for the Rat
			v.animal = "Rat"
		}
		v.year, _ = strconv.Atoi(g[1])
		v.month, _ = strconv.Atoi(g[2])
		v.day, _ = strconv.Atoi(g[4])
		return v, nil
	}
	ours := func(n int) verdict {
		m := lt.months[lt.monthAt(n)]
		return verdict{m.year, m.month, n - m.start + 1, m.leap, lt.animalOf(m.year)}
	}
	from, to := dayNumber(1900, 2, 1), dayNumber(2049, 12, 31)
	var idx []int
	for i, m := range lt.months {
		if m.start >= from && m.start <= to {
			idx = append(idx, i)
		}
	}
	differ := make([]bool, len(idx))
	errs := make([]error, len(idx))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := w; k < len(idx); k += 4 {
				s := lt.months[idx[k]].start
				first, err1 := ask(s)
				before, err2 := ask(s - 1)
				if errs[k] = errors.Join(err1, err2); errs[k] != nil {
					continue
				}
				want := ours(s - 1)
				before.day, want.day = 0, 0
				differ[k] = first != ours(s) || before != want
			}
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	var got []string
	for k, d := range differ {
		if d {
			m := lt.months[idx[k]]
			got = append(got, LunarRef{m.year, m.month, m.leap}.String())
		}
	}
	var want []string
	for _, r := range DefaultDisputedMonths() {
		want = append(want, r.String())
	}
	assert.Greater(t, len(idx), 1800)
	assert.Equal(t, want, got, "month starts on which the table and lunar differ")
}
