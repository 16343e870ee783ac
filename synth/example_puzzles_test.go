package synth_test

import (
	"fmt"

	"github.com/timeaware/timeaware/synth"
)

// A puzzle's structured facts are enough to solve it again: here the
// Fridays the 13th of 1998 that fall in the Chinese lunar year of the Tiger.
func ExamplePuzzleSolver_Solve() {
	facts := []synth.PuzzleFact{
		{Kind: synth.PuzzleKindDay, Day: 13},
		{Kind: synth.PuzzleKindWeekday, Weekday: 5},
		{Kind: synth.PuzzleKindZodiac, Animal: "Tiger"},
		{Kind: synth.PuzzleKindYear, Year: 1998},
	}
	dates, err := synth.NewPuzzleSolver().Solve(facts, 1990, 2010)
	if err != nil {
		panic(err)
	}
	fmt.Println(dates)
	// Output: [1998-02-13 1998-03-13 1998-11-13]
}

// Generated puzzles have exactly the number of solutions asked for.
func ExampleNewPuzzleGenerator() {
	opt := synth.DefaultPuzzleOptions()
	opt.Seed = 7
	opt.MinSolutions, opt.MaxSolutions = 2, 2
	g, err := synth.NewPuzzleGenerator(opt)
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
