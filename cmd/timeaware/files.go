package main

import (
	"errors"
	"os"

	"github.com/timeaware/timeaware/internal/dataset"
)

// expandInputs turns --input values into the files they name
// (dataset.ExpandJSON). A path that cannot be read is an I/O error naming
// the flag.
func (a *app) expandInputs(flag string, paths []string) ([]string, error) {
	a.named(flag, paths...)
	files, err := dataset.ExpandJSON(paths)
	var ie *dataset.InputError
	switch {
	case errors.Is(err, dataset.ErrNoJSONFiles) && errors.As(err, &ie):
		return nil, usagef("--%s %s: %v", flag, ie.Path, dataset.ErrNoJSONFiles)
	case errors.As(err, &ie):
		return nil, pathError(flag, ie.Path, ie.Err)
	}
	return files, err
}

// checkJSONLFile checks that the file named by --flag exists and is not a
// directory.
func (a *app) checkJSONLFile(flag, path string) error {
	a.named(flag, path)
	if st, err := os.Stat(path); err != nil {
		return pathError(flag, path, err)
	} else if st.IsDir() {
		return usagef("--%s %s: is a directory, want a JSONL file", flag, path)
	}
	return nil
}
