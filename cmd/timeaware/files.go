package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// atomicFile is an output written to a temporary file beside its final path
// and renamed into place by Commit, so that readers never see a partial file
// and a failed run leaves nothing behind.
type atomicFile struct {
	path string
	f    *os.File
	h    hash.Hash
	n    int64
	done bool
}

func createAtomic(path string) (*atomicFile, error) {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("output directory %s does not exist", dir)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes the file 0600; a dataset is read by other users and
	// jobs, so give it the mode os.Create would (as the reply cache does).
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
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

// Commit flushes the data to disk and renames it into place.
func (a *atomicFile) Commit() error {
	if a.done {
		return nil
	}
	a.done = true
	if err := a.f.Sync(); err != nil {
		a.f.Close()
		os.Remove(a.f.Name())
		return err
	}
	if err := a.f.Close(); err != nil {
		os.Remove(a.f.Name())
		return err
	}
	if err := os.Rename(a.f.Name(), a.path); err != nil {
		os.Remove(a.f.Name())
		return err
	}
	return nil
}

// Abort discards the temporary file; it is a no-op after Commit.
func (a *atomicFile) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.f.Close()
	os.Remove(a.f.Name())
}

func (a *atomicFile) SHA256() string { return hex.EncodeToString(a.h.Sum(nil)) }

// writeFileAtomic writes a small file atomically.
func writeFileAtomic(path string, data []byte) error {
	f, err := createAtomic(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

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
