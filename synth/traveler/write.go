package traveler

import (
	"context"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/synth"
)

// Write builds count questions (Build) and writes them to o's files with
// their manifest. With o.TestFraction above zero each question's event set
// goes to the test side when a hash of it and opt.Seed falls below the
// fraction, so that no event set straddles the split.
func Write(ctx context.Context, opt Options, count int, o synth.Output) (*synth.Written[*Summary], error) {
	var split output.Splitter
	if o.TestFraction > 0 {
		s, err := splits.NewHashSplit(opt.Seed, o.TestFraction)
		if err != nil {
			return nil, &synth.OptionError{Family: "traveler", Key: "test_fraction", Err: err}
		}
		split = s
	}
	rows := synth.RowsOf[*Row]{Schema: Schema, Role: "traveler_rows",
		Unit:       output.Unit[*Row]{Name: "event set", Of: (*Row).Group, SetSplit: func(r *Row, s string) { r.Split = s }},
		NewBuilder: func() output.RowBuilder[*Row] { return NewRecordBuilder(nil) }}
	return synth.Write(ctx, o, rows, split, func(emit func(*Row) error) (*Summary, error) {
		return Build(ctx, opt, count, emit)
	})
}
