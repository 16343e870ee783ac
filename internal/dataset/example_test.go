package dataset_test

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/timeaware/timeaware/internal/dataset"
)

func ExampleLookup() {
	format, err := dataset.Lookup("jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}

	schema := arrow.NewSchema([]arrow.Field{
		{Name: "role", Type: arrow.BinaryTypes.String},
		{Name: "content", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"user", "assistant"}, nil)
	b.Field(1).(*array.StringBuilder).AppendValues([]string{"Is 1 < 2 & 3?", ""}, []bool{true, false})
	b.Field(2).(*array.Float64Builder).AppendValues([]float64{1, 0.25}, nil)
	rec := b.NewRecord()
	defer rec.Release()

	w, err := format.NewWriter(os.Stdout, schema, dataset.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Write(rec); err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
	}

	_, err = dataset.Lookup("csv")
	fmt.Println(err)
	// Output:
	// {"role":"user","content":"Is 1 < 2 & 3?","score":1.0}
	// {"role":"assistant","content":null,"score":0.25}
	// unknown format "csv" (want parquet, arrow or jsonl)
}

func ExampleOpen() {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.BinaryTypes.String},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	data := strings.NewReader(`{"id":"a","score":0.5}` + "\n" + `{"id":"b","score":null}` + "\n" + `{"id":"c"}` + "\n")

	// JSONL needs the schema; Parquet and Arrow IPC files carry their own
	// and are checked against it when it is given.
	r, err := dataset.Open(data, "pairs.jsonl", nil, dataset.ReadOptions{Schema: schema, Columns: []string{"score", "id"}, BatchRows: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	fmt.Println(r.Schema().Field(0).Name, r.Schema().Field(1).Name)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(rec.NumRows(), rec.Column(0), rec.Column(1))
		rec.Release()
	}

	_, err = dataset.Open(data, "pairs.jsonl", nil, dataset.ReadOptions{Schema: schema, Columns: []string{"label"}})
	fmt.Println(err)
	// Output:
	// score id
	// 2 [0.5 (null)] ["a" "b"]
	// 1 [(null)] ["c"]
	// dataset: pairs.jsonl: column "label" is not in the expected schema
}
