package rewards

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizeNegotiationOptionDecimals(t *testing.T) {
	for _, tc := range []struct{ label, want string }{
		{"$44,000", "44000"},
		{"44 000", "44000"},
		{"Aug 15", "aug15"},
		{"$4.50", "4.5"},
		{"$4.00", "4"},
		{"1.5", "1.5"},
		{"15", "15"},
		{"1.05 days", "1.05days"},
		{"10.50%", "10.5"},
		{"0.0", "0"},
		{"0.05", "0.05"},
		{"1,000.50", "1000.5"},
		{"1.500k", "1.5k"},
		{"v1.2.3", "v1.2.3"},
		{"1.20.30", "1.2.3"},
		{"1.0.0", "1"},
		{"x1.0y", "x1y"},
		{".5", "5"},    // no digit before the point
		{"5.", "5"},    // none after it
		{"3. 5", "35"}, // a space between them
		{"x.5", "x5"},
		{"Ph.D. 2", "phd2"},
		{"", ""},
		{"$", ""},
	} {
		assert.Equal(t, tc.want, NormalizeNegotiationOption(tc.label), tc.label)
	}
}

func TestNegotiationDecimalText(t *testing.T) {
	for _, tc := range []struct {
		lit, want string
		negative  bool
		ok        bool
	}{
		{"0", "0", false, true},
		{"-0", "0", false, true},
		{"0.000", "0", false, true},
		{"-0.0e-5", "0", false, true},
		{"0e99999", "0", false, true},
		{"1", "1", false, true},
		{"-1", "1", true, true},
		{"1.5", "1.5", false, true},
		{"-1.5", "1.5", true, true},
		{"1.50", "1.5", false, true},
		{"15e-1", "1.5", false, true},
		{"0.15e1", "1.5", false, true},
		{"150E-2", "1.5", false, true},
		{"1.5e1", "15", false, true},
		{"1.5E+3", "1500", false, true},
		{"0.5", "0.5", false, true},
		{"0.5e0", "0.5", false, true},
		{"0.05", "0.05", false, true},
		{"5e-2", "0.05", false, true},
		{"5E-3", "0.005", false, true},
		{"12.345e1", "123.45", false, true},
		{"100", "100", false, true},
		{"1e2", "100", false, true},
		{"1e+2", "100", false, true},
		{"10e-1", "1", false, true},
		{"100e-1", "10", false, true},
		{"0.001e3", "1", false, true},
		{"44000.5", "44000.5", false, true},
		{"4.4e4", "44000", false, true},
		{"44000.0000000000001", "44000.0000000000001", false, true},
		{"1e32767", "1" + strings.Repeat("0", 32767), false, true},
		{"1e-32768", "0." + strings.Repeat("0", 32767) + "1", false, true},
		{"1e32768", "", false, false},
		{"-1e-32769", "", false, false},
		{"1e99999999999999999999", "", false, false},
	} {
		text, negative, ok := decimalText(tc.lit)
		assert.Equal(t, tc.ok, ok, tc.lit)
		assert.Equal(t, tc.want, text, tc.lit)
		assert.Equal(t, tc.negative, negative, tc.lit)
	}
}

// decimalScenario has options that differ only by a decimal point, which
// before were one label.
func decimalScenario() NegotiationScenario {
	return NegotiationScenario{ID: "s", Roles: []NegotiationRole{{ID: "a"}, {ID: "b"}}, Issues: []NegotiationIssue{{
		ID:      "price",
		Options: []string{"1", "15", "$4.50", "2.25%", "0.05", "-2.5", "1,000.5", "0", "150"},
		Points:  map[string][]float64{"a": {0, 1, 2, 3, 4, 5, 6, 7, 8}, "b": {8, 7, 6, 5, 4, 3, 2, 1, 0}},
	}}}
}

// TestNegotiationOptionIndexDecimals: a number or label names the option
// whose number it equals exactly, decimal point included; 1.5 names no
// option of "1" and "15" (nor the nearest one).
func TestNegotiationOptionIndexDecimals(t *testing.T) {
	s := decimalScenario()
	require.NoError(t, s.Validate())
	for _, tc := range []struct {
		v    string
		want int // -1: no option
	}{
		{`1.5`, -1}, {`"1.5"`, -1}, {`1.4`, -1}, {`1.6`, -1}, {`"1,5"`, 1},
		{`15`, 1}, {`1.5e1`, 1}, {`150e-1`, 1}, {`15.0`, 1}, {`"15.00"`, 1},
		{`1`, 0}, {`1.0`, 0}, {`"1.00"`, 0}, {`10e-1`, 0},
		{`4.5`, 2}, {`4.50`, 2}, {`"4.5"`, 2}, {`"$4.50"`, 2}, {`45e-1`, 2}, {`45`, -1}, {`450`, -1}, {`4`, -1},
		{`2.25`, 3}, {`225`, -1}, {`22.5`, -1}, {`"2.25 %"`, 3},
		{`0.05`, 4}, {`5e-2`, 4}, {`0.050`, 4}, {`0.5`, -1}, {`5`, -1}, {`0.005`, -1},
		{`-2.5`, 5}, {`-25e-1`, 5}, {`"-2.5"`, 5}, {`2.5`, -1}, {`-25`, -1},
		{`1000.5`, 6}, {`"1000.5"`, 6}, {`1.0005e3`, 6}, {`10005`, -1}, {`1000.50`, 6},
		{`0`, 7}, {`-0`, 7}, {`0e99999`, 7}, {`0.0`, 7},
		{`150`, 8}, {`1.5e2`, 8}, {`1500e-1`, 8},
		{`1e40000`, -1}, {`-`, -1}, {`1.`, -1}, {`"."`, -1}, {`null`, -1},
	} {
		got, ok := s.OptionIndex(0, json.RawMessage(tc.v))
		if tc.want < 0 {
			assert.False(t, ok, "%s names option %d", tc.v, got)
			continue
		}
		assert.True(t, ok, tc.v)
		assert.Equal(t, tc.want, got, tc.v)
	}
}

// TestNegotiationDecimalLabelsValidate: labels that differ only by a
// decimal point are distinct options; labels whose numbers are equal are
// one option and rejected.
func TestNegotiationDecimalLabelsValidate(t *testing.T) {
	s := decimalScenario()
	require.NoError(t, s.Validate())
	for _, tc := range []struct{ a, b string }{{"$4.50", "4.5"}, {"4", "4.00"}, {"1,000", "1000.0"}} {
		s := decimalScenario()
		s.Issues[0].Options = []string{tc.a, tc.b}
		s.Issues[0].Points = map[string][]float64{"a": {0, 1}, "b": {1, 0}}
		err := s.Validate()
		require.Error(t, err, "%s and %s", tc.a, tc.b)
		assert.Contains(t, err.Error(), "reads the same as option 0")
		assert.Contains(t, err.Error(), "labels compare by letters, digits and decimal points only")
	}
}

// TestNegotiationDecimalOfferIsRefused: a proposal of 1.5 days of vacation
// where the options are 0, 2, 5, 7 and 15 days is an invalid action, so
// the accept that follows accepts the HR manager's own proposal (invalid
// too) and makes no deal; 15 days makes one.
func TestNegotiationDecimalOfferIsRefused(t *testing.T) {
	gt := negGT(t, func(g *NegotiationGroundTruth) {
		g.Scenario.Issues[3].Options = []string{"0", "2", "5", "7", "15"}
	})
	offer := func(vacation string) string {
		return `{"role": "candidate", "text": "Here is my counter.", "action": {"action": "propose", "offer": {"salary": 39000, "start_date": "aug 1", "location": "PHOENIX", "vacation": ` +
			vacation + `, "budget": "$2,500", "review": "2 months", "insurance": "Day hired"}}}`
	}
	s := newTestScorer(t, nil)
	for _, tc := range []struct {
		vacation      string
		deal, invalid float64
	}{
		{`1.5`, 0, 2},
		{`"1.5"`, 0, 2},
		{`15`, 1, 0},
		{`"15"`, 1, 0},
	} {
		it := Item{DataSource: "negotiation", GroundTruth: gt,
			SolutionStr: lines(strings.Replace(scriptedDeal[0], `"2 days"`, `"2"`, 1), offer(tc.vacation), `{"role": "hr_manager", "text": "Agreed.", "action": {"action": "accept"}}`)}
		res := s.Score(context.Background(), &it)
		require.NoError(t, res.Err)
		got := map[string]float64{}
		for i, k := range Negotiation.Keys {
			got[k] = res.Details[i]
		}
		assert.Equal(t, tc.deal, got["deal"], tc.vacation)
		assert.Equal(t, tc.invalid, got["invalid_actions"], tc.vacation)
		if tc.deal == 0 {
			assert.Equal(t, 4500.0, got["points_self"], tc.vacation)
		}
	}
}
