// Command gen writes the contamination benchmark's inputs: -bench
// benchmark records in the shape of the toolkit's imported benchmarks
// (synth.RowSchema: prompt, reward_model.ground_truth, extra_info with its
// split; a fifth on the dev split), -train training rows of about -bytes
// bytes of random words (Parquet, id and text), and -planted training rows
// of each planted kind, spread evenly:
//
//	exact       a test record's question copied into the row
//	paraphrase  the question re-cased, re-punctuated and re-spaced
//	partial     the first 80% of the question's words, inside longer text
//
// It also writes what the baseline reads: bench.jsonl (datatrove's
// {id, text: answer, query: question, task}), train-subset.jsonl (every
// planted row and the first clean ones, -subset rows in all) and
// truth.json (each planted row's kind and record).
//
//	go run ./bench/contamination/gen -train 1000000 -bench 100000 -out DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/synth"
)

// Kinds of planted contamination.
var kinds = []string{"exact", "paraphrase", "partial"}

var benchmarks = []string{"timeqa", "tempreason", "tram", "test_of_time"}

type record struct {
	id, bench, split, question, answer string
}

type planted struct {
	Kind   string `json:"kind"`
	Record string `json:"record"`
}

func main() {
	nTrain := flag.Int("train", 1000000, "training rows")
	nBench := flag.Int("bench", 100000, "benchmark records")
	bytes := flag.Int("bytes", 1000, "about this many bytes of text per training row")
	nPlanted := flag.Int("planted", 1000, "training rows of each planted kind")
	subset := flag.Int("subset", 20000, "rows of train-subset.jsonl (the planted ones and the first clean ones)")
	out := flag.String("out", ".", "output directory")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := run(*nTrain, *nBench, *bytes, *nPlanted, *subset, *out, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(nTrain, nBench, nBytes, nPlanted, subset int, dir string, seed uint64) error {
	if 3*nPlanted > nTrain {
		return fmt.Errorf("-planted %d: three kinds need %d rows, more than -train", nPlanted, 3*nPlanted)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	vocab := make([]string, 50000)
	for i := range vocab {
		b := make([]byte, 3+rng.IntN(7))
		for k := range b {
			b[k] = byte('a' + rng.IntN(26))
		}
		vocab[i] = string(b)
	}
	words := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
		}
		return w
	}
	// The benchmark records.
	recs := make([]record, nBench)
	var tests []int
	for i := range recs {
		q := words(15 + rng.IntN(26))
		q[0] = strings.ToUpper(q[0][:1]) + q[0][1:]
		split := "test"
		if i%5 == 4 {
			split = "dev"
		} else {
			tests = append(tests, i)
		}
		recs[i] = record{id: fmt.Sprintf("b%d", i), bench: benchmarks[i%len(benchmarks)], split: split,
			question: strings.Join(q, " ") + "?", answer: strings.Join(words(1+rng.IntN(3)), " ")}
	}
	if 3*nPlanted > len(tests) {
		return fmt.Errorf("-planted %d: more than a third of the %d test records", nPlanted, len(tests))
	}
	if err := writeBench(filepath.Join(dir, "bench.parquet"), filepath.Join(dir, "bench.jsonl"), recs); err != nil {
		return err
	}
	// Planted rows, spread evenly; each takes a distinct test record.
	perm := rng.Perm(len(tests))
	every := nTrain / (3 * nPlanted)
	truth := map[string]planted{}
	plantAt := map[int]int{} // row → planted index
	for p := range 3 * nPlanted {
		plantAt[p*every+every/2] = p
	}
	filler := func(n int) string { return strings.Join(words(n), " ") }
	sub, err := os.Create(filepath.Join(dir, "train-subset.jsonl"))
	if err != nil {
		return err
	}
	defer sub.Close()
	subClean := subset - 3*nPlanted
	wordsPerRow := nBytes / 6
	row := func(i int) (id, text string, inSubset bool) {
		id = fmt.Sprintf("t%d", i)
		p, ok := plantAt[i]
		if !ok {
			text = filler(wordsPerRow)
			inSubset = subClean > 0
			subClean--
			return id, text, inSubset
		}
		r := recs[tests[perm[p]]]
		kind := kinds[p%3]
		truth[id] = planted{Kind: kind, Record: r.id}
		q := r.question
		switch kind {
		case "paraphrase":
			q = paraphrase(rng, q)
		case "partial":
			w := strings.Fields(q)
			q = strings.Join(w[:len(w)*4/5], " ")
		}
		before := rng.IntN(wordsPerRow / 2)
		text = filler(before) + " " + q + " " + filler(max(wordsPerRow-before-len(strings.Fields(q)), 1))
		return id, text, true
	}
	if err := writeTrain(filepath.Join(dir, "train.parquet"), nTrain, row, sub); err != nil {
		return err
	}
	tb, err := json.Marshal(truth)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "truth.json"), tb, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d benchmark records (%d test), %d training rows, %d planted of each kind\n", dir, nBench, len(tests), nTrain, nPlanted)
	return sub.Close()
}

// paraphrase changes what the default normalisation removes: case,
// punctuation and spacing.
func paraphrase(rng *rand.Rand, q string) string {
	w := strings.Fields(q)
	for i := range w {
		switch rng.IntN(4) {
		case 0:
			w[i] = strings.ToUpper(w[i])
		case 1:
			w[i] += ","
		case 2:
			w[i] = "\"" + w[i] + "\""
		}
	}
	return strings.Join(w, "  \n ")
}

func writeBench(parquetPath, jsonlPath string, recs []record) error {
	extra := arrow.StructOf(
		arrow.Field{Name: "benchmark", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "split", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "subset", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "id", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "category", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "licence", Type: arrow.BinaryTypes.String},
		arrow.Field{Name: "training_allowed", Type: arrow.FixedWidthTypes.Boolean},
		arrow.Field{Name: "index", Type: arrow.PrimitiveTypes.Int64},
	)
	schema := synth.RowSchema(extra)
	f, err := os.Create(parquetPath)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := dataset.Parquet.NewWriter(f, schema, dataset.Options{})
	if err != nil {
		return err
	}
	rows := synth.NewRows(memory.DefaultAllocator, schema)
	defer rows.Release()
	ei := rows.ExtraInfo()
	jl, err := os.Create(jsonlPath)
	if err != nil {
		return err
	}
	defer jl.Close()
	enc := json.NewEncoder(jl)
	flush := func() error {
		rec := rows.NewRecord()
		defer rec.Release()
		return w.Write(rec)
	}
	for i, r := range recs {
		gt, _ := json.Marshal(map[string][]string{"answers": {r.answer}})
		s := string(gt)
		rows.AppendHead(r.bench, "temporal", &s)
		rows.AppendTurn("user", r.question)
		for k, v := range []string{r.bench, r.split, "default", r.id, "time", "cc-by-4.0"} {
			ei.FieldBuilder(k).(*array.StringBuilder).Append(v)
		}
		ei.FieldBuilder(6).(*array.BooleanBuilder).Append(false)
		ei.FieldBuilder(7).(*array.Int64Builder).Append(int64(i))
		if r.split == "test" {
			if err := enc.Encode(map[string]string{"id": r.id, "text": r.answer, "query": r.question, "task": r.bench}); err != nil {
				return err
			}
		}
		if rows.Len() == 8192 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return jl.Close()
}

func writeTrain(path string, n int, row func(int) (string, string, bool), sub *os.File) error {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "text", Type: arrow.BinaryTypes.String},
	}, nil)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := dataset.Parquet.NewWriter(f, schema, dataset.Options{})
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	ids, texts := b.Field(0).(*array.StringBuilder), b.Field(1).(*array.StringBuilder)
	enc := json.NewEncoder(sub)
	flush := func() error {
		rec := b.NewRecord()
		defer rec.Release()
		return w.Write(rec)
	}
	for i := range n {
		id, text, inSubset := row(i)
		ids.Append(id)
		texts.Append(text)
		if inSubset {
			if err := enc.Encode(map[string]string{"id": id, "text": text}); err != nil {
				return err
			}
		}
		if ids.Len() == 8192 {
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
