package puzzles_test

import (
	"fmt"

	"github.com/timeaware/timeaware/synth/puzzles"
)

// A puzzle's structured facts are enough to solve it again: here the
// Fridays the 13th of 1998 that fall in the Chinese lunar year of the Tiger.
func ExampleSolver_Solve() {
	facts := []puzzles.Fact{
		{Kind: puzzles.KindDay, Day: 13},
		{Kind: puzzles.KindWeekday, Weekday: 5},
		{Kind: puzzles.KindZodiac, Animal: "Tiger"},
		{Kind: puzzles.KindYear, Year: 1998},
	}
	dates, err := puzzles.NewSolver().Solve(facts, 1990, 2010)
	if err != nil {
		panic(err)
	}
	fmt.Println(dates)
	// Output: [1998-02-13 1998-03-13 1998-11-13]
}

// Generated puzzles have exactly the number of solutions asked for.
func ExampleNewGenerator() {
	opt := puzzles.DefaultOptions()
	opt.Seed = 7
	opt.MinSolutions, opt.MaxSolutions = 2, 2
	g, err := puzzles.NewGenerator(opt)
	if err != nil {
		panic(err)
	}
	p, err := g.Generate(0)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(p.Solutions), p.GroundTruth() == p.Solutions[0]+","+p.Solutions[1])
	// Output: 2 true
}
