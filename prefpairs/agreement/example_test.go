package agreement_test

import (
	"fmt"

	"github.com/timeaware/timeaware/prefpairs/agreement"
)

// ExampleAlpha reproduces Krippendorff's worked example: four coders, twelve
// units, values 1–5, with missing judgements simply left out of each unit.
func ExampleAlpha() {
	units := [][]float64{
		{1, 1, 1}, {2, 2, 3, 2}, {3, 3, 3, 3}, {3, 3, 3, 3},
		{2, 2, 2, 2}, {1, 2, 3, 4}, {4, 4, 4, 4}, {1, 1, 2, 1},
		{2, 2, 2, 2}, {5, 5, 5}, {1, 1}, {3},
	}
	for _, m := range []agreement.Metric{agreement.Nominal, agreement.Ordinal, agreement.Interval} {
		a, err := agreement.Alpha(units, m)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %.3f\n", m, a)
	}
	// Output:
	// nominal 0.743
	// ordinal 0.815
	// interval 0.849
}
