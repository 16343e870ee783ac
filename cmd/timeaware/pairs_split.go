package main

import (
	"io"
	"os"
	"strings"

	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/prefpairs"
	"github.com/timeaware/timeaware/splits"
)

// pairsSplit maps the catalog and split keys of pairs build to its
// options: the catalog file (read here, so that its errors name
// --catalog) and the split strategy.
func (a *app) pairsSplit(o *prefpairs.DatasetOptions) error {
	v := a.v
	if path := v.GetString("pairs.catalog"); path != "" {
		cat, mf, err := readSideFile(a, path, "catalog", splits.LoadCatalog)
		if err != nil {
			return err
		}
		o.Catalog, o.CatalogFile = cat, &mf
	}
	o.Split = prefpairs.SplitOptions{Strategy: v.GetString("pairs.split"), Seed: v.GetUint64("pairs.seed"),
		TestFraction: v.GetFloat64("pairs.test_fraction")}
	switch o.Split.Strategy {
	case "", splits.StrategyPaper:
	case splits.StrategyGroup:
		if !(o.Split.TestFraction > 0 && o.Split.TestFraction < 1) {
			return a.badKeyf("pairs.test_fraction", "want a share between 0 and 1")
		}
	default:
		return a.badKeyf("pairs.split", "want paper or group")
	}
	return nil
}

// readSideFile opens, reads and hashes a whole side file, named by the
// flag of its role (annotations_file is --annotations-file).
func readSideFile[T any](a *app, path, role string, read func(io.Reader, string) (T, error)) (T, output.Entry, error) {
	var zero T
	flag := strings.ReplaceAll(role, "_", "-")
	a.named(flag, path)
	in := output.OpenInput(path)
	defer in.Close()
	if _, err := os.Stat(path); err != nil {
		return zero, output.Entry{}, pathError(flag, path, err)
	}
	v, err := read(in, path)
	if err != nil {
		return zero, output.Entry{}, err
	}
	mf := in.Entry("")
	mf.Role = role
	return v, mf, nil
}

// closeInputs closes the inputs a command opened.
func closeInputs(readers []*output.Input) {
	for _, r := range readers {
		r.Close()
	}
}
