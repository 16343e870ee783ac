package eval

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/timeaware/timeaware/internal/dataset"
	"github.com/timeaware/timeaware/splits"
)

// OptionError is an error about what one of a function's options names: a
// file or directory to read or write, or an endpoint. Option is the
// option's field ("Data", "Out", "Input", "Endpoint", ...), Value the path
// or URL as given. Invalid marks a value that cannot work whatever the
// files hold (a directory that holds both sides of a split, a URL that
// does not parse), as opposed to a file that could not be read or written
// or whose data is wrong: what to fix is the option, not the file.
type OptionError struct {
	Option, Value string
	Invalid       bool
	Err           error
}

func (e *OptionError) Error() string { return "eval: " + e.Value + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *OptionError) Unwrap() error { return e.Err }

// ReadData reads the rows of dataset files and of directories of them
// (every dataset file below one, in name order: splits.ExpandDir), in the
// order given: what Run takes. Files at or below a skip path (the run's
// results file, its reply cache) are left out of the directories. A
// directory that holds both sides of a split is refused: a report of train
// and test rows together measures neither. An error about a path given is
// an *OptionError of Option "Data"; an error in a file's rows names the
// file.
func ReadData(paths []string, skip ...string) ([]Row, error) {
	var rows []Row
	for _, p := range paths {
		files, err := dataFiles(p, skip)
		if err != nil {
			return nil, err
		}
		for _, file := range files {
			rs, err := ReadRows(file)
			if err != nil {
				return nil, err
			}
			rows = append(rows, rs...)
		}
	}
	if len(rows) == 0 {
		return nil, &OptionError{Option: "Data", Value: strings.Join(paths, ", "), Err: dataset.ErrNoRecords}
	}
	return rows, nil
}

// dataFiles is the dataset files path stands for: itself, or the dataset
// files below the directory but those under skip.
func dataFiles(path string, skip []string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &OptionError{Option: "Data", Value: path, Err: err}
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	all, err := splits.ExpandDir(path)
	if err != nil {
		return nil, &OptionError{Option: "Data", Value: path, Err: err}
	}
	var files []string
	sides := map[string]string{}
	for _, file := range all {
		if under(file, skip) {
			continue
		}
		files = append(files, file)
		if side := splits.SideFromPath(path, file); side != "" && sides[side] == "" {
			sides[side] = file
		}
	}
	if sides[splits.Train] != "" && sides[splits.Test] != "" {
		return nil, &OptionError{Option: "Data", Value: path, Invalid: true, Err: fmt.Errorf(
			"holds both sides of a split (%s, %s); name the side to evaluate", sides[splits.Train], sides[splits.Test])}
	}
	if len(files) == 0 {
		return nil, &OptionError{Option: "Data", Value: path, Invalid: true, Err: errors.New("no dataset files besides the results and the cache")}
	}
	return files, nil
}

// under reports whether path is one of skip or lies below one ("" paths
// skip nothing).
func under(path string, skip []string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	for _, s := range skip {
		if s == "" {
			continue
		}
		if p, err := filepath.Abs(s); err == nil && (abs == p || strings.HasPrefix(abs, p+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

// isFileSystemError reports whether err is the file system's refusal of a
// path rather than a problem with what the path holds.
func isFileSystemError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe)
}
