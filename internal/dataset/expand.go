package dataset

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNoJSONFiles is the error of a directory given as an input that holds
// no .json or .jsonl file.
var ErrNoJSONFiles = errors.New("directory has no .json or .jsonl files")

// InputError is the error of one input path of ExpandJSON: the file
// system's refusal, or ErrNoJSONFiles.
type InputError struct {
	Path string
	Err  error
}

func (e *InputError) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

// ExpandJSON turns input paths into the files they name, each once, in the
// order given: a file stands for itself, a directory for the .json and
// .jsonl files directly inside it, sorted by name, but for hidden files and
// the manifests of outputs written there (NAME.manifest.json).
func ExpandJSON(paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		files, err := jsonFiles(p)
		if err != nil {
			return nil, &InputError{Path: p, Err: err}
		}
		for _, f := range files {
			if !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// jsonFiles is what one input path stands for.
func jsonFiles(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		name := strings.ToLower(e.Name())
		ext := filepath.Ext(name)
		if !e.IsDir() && !strings.HasPrefix(name, ".") && (ext == ".json" || ext == ".jsonl") &&
			!strings.HasSuffix(name, ".manifest.json") {
			files = append(files, filepath.Join(p, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, ErrNoJSONFiles
	}
	sort.Strings(files)
	return files, nil
}
