package main

import (
	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/prefpairs"
)

// pairsOutput is one pairs dataset file being written: a sink and the
// batch being built.
type pairsOutput struct {
	sink *output.Sink
	rb   *prefpairs.RecordBuilder
}

func newPairsOutput(path string, format *dataset.Format, opt dataset.Options) (*pairsOutput, error) {
	sink, err := output.NewSink(path, format, prefpairs.Schema, output.SinkOptions{Dataset: opt})
	if err != nil {
		return nil, pathError("out", path, err)
	}
	return &pairsOutput{sink: sink, rb: prefpairs.NewRecordBuilder(nil)}, nil
}

func (o *pairsOutput) add(p *prefpairs.Pair) error {
	o.rb.Append(p)
	return o.sink.FlushFull(o.rb)
}

// finish writes what is left and the format's footer; the file is still
// temporary until commit.
func (o *pairsOutput) finish() error {
	err := o.sink.Drain(o.rb)
	o.rb.Release()
	o.rb = nil
	return err
}

// abort discards the output; after a commit it leaves the file alone.
func (o *pairsOutput) abort() {
	o.sink.Abort()
	if o.rb != nil {
		o.rb.Release()
		o.rb = nil
	}
}

func (o *pairsOutput) record(format string) output.Entry { return o.sink.Entry("pairs", format) }
