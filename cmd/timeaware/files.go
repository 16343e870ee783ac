package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// expandInputs turns --input values into a sorted list of files: a directory
// stands for the .json and .jsonl files directly inside it, but for the
// manifests of the outputs written there (NAME.manifest.json). A path that
// cannot be read is an I/O error naming the flag.
func (a *app) expandInputs(flag string, paths []string) ([]string, error) {
	a.named(flag, paths...)
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, pathError(flag, p, err)
		}
		var files []string
		if st.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				return nil, pathError(flag, p, err)
			}
			for _, e := range entries {
				ext := strings.ToLower(filepath.Ext(e.Name()))
				if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && (ext == ".json" || ext == ".jsonl") &&
					!strings.HasSuffix(strings.ToLower(e.Name()), ".manifest.json") {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
			if len(files) == 0 {
				return nil, usagef("--%s %s: directory has no .json or .jsonl files", flag, p)
			}
			sort.Strings(files)
		} else {
			files = []string{p}
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
