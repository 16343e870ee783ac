// Command gen writes a synthetic train/test pair of split files for the
// leakage-gate benchmark: distinct conversations of random words, whole
// scenarios on each side, all three sensitivity levels on both, and
// -near train conversations that are copies of test ones with two words
// changed (leaks both gates under comparison must find).
//
//	go run ./bench/splits/gen -train 1000000 -test 100000 -near 1000 -out DIR
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/prefpairs"
	"github.com/timeaware/timeaware/splits"
	"github.com/timeaware/timeaware/splits/scenario"
)

func main() {
	train := flag.Int("train", 1000000, "train conversations")
	test := flag.Int("test", 100000, "test conversations")
	words := flag.Int("words", 200, "words per conversation")
	near := flag.Int("near", 1000, "train conversations that nearly copy a test one (two words changed)")
	out := flag.String("out", ".", "output directory")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := run(*train, *test, *words, *near, *out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(nTrain, nTest, nWords, nNear int, dir string, seed uint64) error {
	if nNear > min(nTrain, nTest) {
		return fmt.Errorf("-near %d exceeds the smaller side", nNear)
	}
	cat, err := scenario.Default()
	if err != nil {
		return err
	}
	a := splits.PaperAssignment(cat)
	sides := map[string][]*scenario.Scenario{}
	for _, s := range cat.Scenarios() {
		side, _ := a.Side(s.Name)
		sides[side] = append(sides[side], s)
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", rng.Uint64()&0xffffff)
	}
	// The test side first: the train side copies its first nNear prompts.
	var kept [][]string
	for _, side := range []struct {
		name string
		n    int
	}{{splits.Test, nTest}, {splits.Train, nTrain}} {
		path := filepath.Join(dir, "pairs-"+side.name+".parquet")
		prompt := func(i int) []string {
			msgs := make([]string, 6)
			if side.name == splits.Train && i < nNear {
				copy(msgs, kept[i])
				// Change two words of two messages: a Jaccard near 0.9
				// over 5-word shingles.
				for _, m := range []int{1, 4} {
					words := strings.Fields(msgs[m])
					words[len(words)/2] = fmt.Sprintf("changed%d", i)
					msgs[m] = strings.Join(words, " ")
				}
				return msgs
			}
			for m := range msgs {
				var b strings.Builder
				for k := 0; k < nWords/6; k++ {
					if k > 0 {
						b.WriteByte(' ')
					}
					b.WriteString(vocab[rng.IntN(len(vocab))])
				}
				msgs[m] = b.String()
			}
			if side.name == splits.Test && i < nNear {
				kept = append(kept, msgs)
			}
			return msgs
		}
		if err := write(path, side.name, side.n, sides[side.name], prompt); err != nil {
			return err
		}
		fmt.Printf("%s: %d conversations\n", path, side.n)
	}
	return nil
}

func write(path, side string, n int, scen []*scenario.Scenario, prompt func(i int) []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := dataset.Parquet.NewWriter(f, prefpairs.Schema, dataset.Options{})
	if err != nil {
		return err
	}
	rb := prefpairs.NewRecordBuilder(nil)
	defer rb.Release()
	flush := func() error {
		rec := rb.NewRecord()
		defer rec.Release()
		return w.Write(rec)
	}
	reply := "Here is what we found before."
	for i := 0; i < n; i++ {
		s := scen[i%len(scen)]
		var msgs []conversation.Message
		for m, text := range prompt(i) {
			role := conversation.RoleUser
			if m%2 == 1 {
				role = conversation.RoleAssistant
			}
			msgs = append(msgs, conversation.Message{Role: role, Content: &text})
		}
		rb.Append(&prefpairs.Pair{
			Prompt:   msgs,
			Chosen:   []conversation.Message{{Role: conversation.RoleAssistant, Content: &reply}},
			Rejected: []conversation.Message{{Role: conversation.RoleAssistant, Content: &reply}},
			Tools:    "[]", Margin: 1, ID: fmt.Sprintf("%s_%d", s.Aliases[0], i), Scenario: s.Name,
			Sensitivity: s.Sensitivity, Label: conversation.PreferTool, Split: side,
		})
		if rb.Len() == 8192 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return w.Close()
}
