package traveler

import (
	"cmp"
	_ "embed"
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// surveyCSV is the reference survey of vague adverbials (survey_means.csv): mean
// human ratings (votes coded 0, .25, .5, .75, 1) of how well a vague temporal
// adverbial applies to an event that happened a given number of minutes
// ago, from the public survey data of the FuzzyLLI project (Kenneweg et al.),
// whose tom_* events are the household events of the TRAVELER paper.
// TestSurveyEmbedded keeps the copy equal to the shared file.
//
//go:embed survey_means.csv
var surveyCSV string

// Vague temporal adverbials of TRAVELER (the TRAVELER paper, Table 3), as the survey
// names them.
const (
	Just        = "just"
	Recently    = "recently"
	SomeTimeAgo = "some time ago"
	LongTimeAgo = "long time ago"
)

// Adverbials lists the vague adverbials in survey order.
var Adverbials = []string{Just, Recently, SomeTimeAgo, LongTimeAgo}

// Curve is the survey curve of one event and adverbial: the mean
// rating at each surveyed time distance, read as the probability that the
// adverbial applies (the TRAVELER paper's p_{e,A}(Δt)).
type Curve struct {
	// Minutes are the surveyed distances, ascending; Means the mean
	// ratings there.
	Minutes []float64
	Means   []float64
}

// P is the probability that the adverbial applies to an event that
// happened the given number of minutes ago: the survey means interpolated
// linearly in log(minutes) between knots, and held at the first (last) mean
// before the first (after the last) knot, since the survey says nothing
// beyond its range. It is exact at every knot and monotone between knots.
func (c *Curve) P(minutes float64) float64 {
	m, p := c.Minutes, c.Means
	if !(minutes > m[0]) {
		return p[0]
	}
	if minutes >= m[len(m)-1] {
		return p[len(p)-1]
	}
	i, _ := slices.BinarySearch(m, minutes)
	if m[i] == minutes {
		return p[i]
	}
	w := (math.Log(minutes) - math.Log(m[i-1])) / (math.Log(m[i]) - math.Log(m[i-1]))
	return p[i-1] + w*(p[i]-p[i-1])
}

// Monotone reports the direction of the survey means: +1 if they never
// fall, −1 if they never rise, 0 if they do both.
func (c *Curve) Monotone() int {
	up, down := true, true
	for i := 1; i < len(c.Means); i++ {
		up = up && c.Means[i] >= c.Means[i-1]
		down = down && c.Means[i] <= c.Means[i-1]
	}
	switch {
	case up:
		return 1
	case down:
		return -1
	}
	return 0
}

var (
	surveyOnce sync.Once
	survey     map[[2]string]*Curve
	surveyErr  error
)

// SurveyCurve returns the curve of a survey event (e.g.
// "tom_eating_risotto") and adverbial (Adverbials).
func SurveyCurve(event, adverbial string) (*Curve, error) {
	surveyOnce.Do(func() { survey, surveyErr = parseSurvey(surveyCSV) })
	if surveyErr != nil {
		return nil, surveyErr
	}
	c, ok := survey[[2]string{event, adverbial}]
	if !ok {
		return nil, fmt.Errorf("traveler: survey has no curve for event %q and adverbial %q", event, adverbial)
	}
	return c, nil
}

// parseSurvey reads survey_means.csv (event, adverbial,
// minutes_ago, raters, mean_membership, sd) into curves sorted by minutes.
func parseSurvey(text string) (map[[2]string]*Curve, error) {
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("traveler: survey means: %w", err)
	}
	if len(recs) < 2 || !slices.Equal(recs[0][:5], []string{"event", "adverbial", "minutes_ago", "raters", "mean_membership"}) {
		return nil, fmt.Errorf("traveler: survey means: unexpected header %q", recs[0])
	}
	type knot struct{ m, p float64 }
	knots := map[[2]string][]knot{}
	for i, r := range recs[1:] {
		m, err1 := strconv.ParseFloat(r[2], 64)
		p, err2 := strconv.ParseFloat(r[4], 64)
		if err1 != nil || err2 != nil || !(m > 0) || !(p >= 0 && p <= 1) {
			return nil, fmt.Errorf("traveler: survey means: line %d: bad minutes %q or mean %q", i+2, r[2], r[4])
		}
		k := [2]string{r[0], r[1]}
		knots[k] = append(knots[k], knot{m, p})
	}
	out := make(map[[2]string]*Curve, len(knots))
	for k, ks := range knots {
		slices.SortFunc(ks, func(a, b knot) int { return cmp.Compare(a.m, b.m) })
		c := &Curve{}
		for i, kn := range ks {
			if i > 0 && kn.m == ks[i-1].m {
				return nil, fmt.Errorf("traveler: survey means: %s/%s: %v minutes twice", k[0], k[1], kn.m)
			}
			c.Minutes = append(c.Minutes, kn.m)
			c.Means = append(c.Means, kn.p)
		}
		out[k] = c
	}
	return out, nil
}
