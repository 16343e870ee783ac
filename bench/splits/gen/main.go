// Command gen writes a synthetic train/test pair of split files for the
// leakage-gate benchmark: distinct conversations of random words, whole
// scenarios on each side, all three sensitivity levels on both.
//
//	go run ./bench/splits/gen -train 200000 -test 50000 -out DIR
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/timeaware/timeaware/conversation"
	"github.com/timeaware/timeaware/dataset"
	"github.com/timeaware/timeaware/prefpairs"
	"github.com/timeaware/timeaware/splits"
)

func main() {
	train := flag.Int("train", 200000, "train conversations")
	test := flag.Int("test", 50000, "test conversations")
	words := flag.Int("words", 300, "words per conversation")
	out := flag.String("out", ".", "output directory")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := run(*train, *test, *words, *out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(nTrain, nTest, nWords int, dir string, seed uint64) error {
	cat, err := splits.DefaultCatalog()
	if err != nil {
		return err
	}
	a := splits.PaperAssignment(cat)
	sides := map[string][]*splits.Scenario{}
	for _, s := range cat.Scenarios() {
		side, _ := a.Side(s.Name)
		sides[side] = append(sides[side], s)
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", rng.Uint64()&0xffffff)
	}
	for _, side := range []struct {
		name string
		n    int
	}{{splits.Train, nTrain}, {splits.Test, nTest}} {
		path := filepath.Join(dir, "pairs-"+side.name+".parquet")
		if err := write(path, side.name, side.n, nWords, sides[side.name], vocab, rng); err != nil {
			return err
		}
		fmt.Printf("%s: %d conversations\n", path, side.n)
	}
	return nil
}

func write(path, side string, n, nWords int, scen []*splits.Scenario, vocab []string, rng *rand.Rand) error {
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
		var prompt []conversation.Message
		per := nWords / 6
		for m := 0; m < 6; m++ {
			var b strings.Builder
			for k := 0; k < per; k++ {
				if k > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(vocab[rng.IntN(len(vocab))])
			}
			text := b.String()
			role := conversation.RoleUser
			if m%2 == 1 {
				role = conversation.RoleAssistant
			}
			prompt = append(prompt, conversation.Message{Role: role, Content: &text})
		}
		rb.Append(&prefpairs.Pair{
			Prompt:   prompt,
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
