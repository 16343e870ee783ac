package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// expandInputs turns --input values into a sorted list of files: a directory
// stands for the .json and .jsonl files directly inside it.
func expandInputs(flag string, paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, usagef("--%s %s: %v", flag, p, unwrapPathError(err))
		}
		var files []string
		if st.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				return nil, usagef("--%s %s: %v", flag, p, err)
			}
			for _, e := range entries {
				ext := strings.ToLower(filepath.Ext(e.Name()))
				if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && (ext == ".json" || ext == ".jsonl") {
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

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
