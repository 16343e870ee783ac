package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/timeaware/timeaware/atomicfile"
)

// atomicFile is an output written through atomicfile (whole or not at
// all, nothing left behind by a failed or killed run), counting and hashing
// its bytes for the manifest.
type atomicFile struct {
	path string
	f    *atomicfile.File
	h    hash.Hash
	n    int64
}

func createAtomic(path string) (*atomicFile, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	return &atomicFile{path: path, f: f, h: sha256.New()}, nil
}

func (a *atomicFile) Write(p []byte) (int, error) {
	n, err := a.f.Write(p)
	a.h.Write(p[:n])
	a.n += int64(n)
	return n, err
}

// Commit flushes the data to disk and puts the file in place.
func (a *atomicFile) Commit() error { return a.f.Commit() }

// Abort discards the file; it is a no-op after Commit.
func (a *atomicFile) Abort() { a.f.Abort() }

func (a *atomicFile) SHA256() string { return hex.EncodeToString(a.h.Sum(nil)) }

// writeFileAtomic writes a small file atomically.
func writeFileAtomic(path string, data []byte) error { return atomicfile.WriteFile(path, data) }

// inputFile opens a file on first read, hashes what it reads, and closes it
// at end of file, so that many inputs cost one descriptor at a time.
type inputFile struct {
	path string
	f    *os.File
	h    hash.Hash
	n    int64
	eof  bool
	err  error
}

func newInputFile(path string) *inputFile { return &inputFile{path: path, h: sha256.New()} }

func (in *inputFile) Read(p []byte) (int, error) {
	if in.eof {
		return 0, io.EOF
	}
	if in.err != nil {
		return 0, in.err
	}
	if in.f == nil {
		if in.f, in.err = os.Open(in.path); in.err != nil {
			return 0, in.err
		}
	}
	n, err := in.f.Read(p)
	in.h.Write(p[:n])
	in.n += int64(n)
	if err == io.EOF {
		in.eof = true
		in.f.Close()
	}
	return n, err
}

func (in *inputFile) Close() {
	if in.f != nil && !in.eof {
		in.f.Close()
	}
}

func (in *inputFile) record() manifestFile {
	return manifestFile{Path: in.path, SHA256: hex.EncodeToString(in.h.Sum(nil)), Bytes: in.n}
}

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

// manifest is the JSON written beside every dataset: enough to tell where
// the data came from and reproduce it.
type manifest struct {
	Tool    string         `json:"tool"`
	Version string         `json:"version"`
	Command string         `json:"command"`
	Outputs []manifestFile `json:"outputs"`
	Inputs  []manifestFile `json:"inputs"`
	Config  map[string]any `json:"config"`
	Summary any            `json:"summary"`
	Notes   []string       `json:"notes,omitempty"`
}

type manifestFile struct {
	Path   string `json:"path"`
	Role   string `json:"role,omitempty"`
	Format string `json:"format,omitempty"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Rows   *int   `json:"rows,omitempty"`
}

func manifestPath(out string) string { return out + ".manifest.json" }

func writeManifest(path string, m *manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

// hashFile records a whole side file (annotations, direct answers).
func hashFile(path, role string) (manifestFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return manifestFile{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return manifestFile{}, err
	}
	return manifestFile{Path: path, Role: role, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n}, nil
}
