package output

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
)

// Manifest is the JSON written beside every dataset: enough to tell where
// the data came from and to reproduce it.
type Manifest struct {
	Tool    string         `json:"tool"`
	Version string         `json:"version"`
	Command string         `json:"command"`
	Outputs []Entry        `json:"outputs"`
	Inputs  []Entry        `json:"inputs"`
	Config  map[string]any `json:"config"`
	Summary any            `json:"summary"`
	Notes   []string       `json:"notes,omitempty"`
}

// Entry is a file of a manifest: an output or an input.
type Entry struct {
	Path   string `json:"path"`
	Role   string `json:"role,omitempty"`
	Format string `json:"format,omitempty"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
	Rows   *int   `json:"rows,omitempty"`
}

// ManifestPath is the manifest's path for an output: <out>.manifest.json.
func ManifestPath(out string) string { return out + ".manifest.json" }

// WriteManifest writes m to path atomically: a manifest committed with no
// files of its own (Commit).
func WriteManifest(path string, m *Manifest) error {
	return Commit(context.Background(), path, m)
}

// ErrChanged is wrapped by ReadManifest's error for an output whose bytes
// are not those the manifest recorded.
var ErrChanged = errors.New("changed since the build")

// ReadManifest reads the manifest at path. Its outputs' paths are as they
// were given at build time; when one is not there, it is tried relative to
// the manifest's own directory (a merged manifest of sharded parts names
// them so), then by its base name there, and the path that exists is put
// in the entry.
// verify checks each output's SHA-256 against the recorded one: a data
// file changed after its build is an error.
func ReadManifest(path string, verify bool) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not a timeaware manifest: %w", err)
	}
	for i := range m.Outputs {
		o := &m.Outputs[i]
		if _, err := os.Stat(o.Path); err != nil {
			dir := filepath.Dir(path)
			alts := []string{filepath.Join(dir, filepath.Base(o.Path))}
			if !filepath.IsAbs(o.Path) {
				alts = append([]string{filepath.Join(dir, o.Path)}, alts...)
			}
			found := false
			for _, alt := range alts {
				if _, err2 := os.Stat(alt); err2 == nil {
					o.Path, found = alt, true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("output %s: %w", o.Path, err)
			}
		}
		if verify && o.SHA256 != "" {
			got, err := HashFile(o.Path, "")
			if err != nil {
				return nil, err
			}
			if got.SHA256 != o.SHA256 {
				return nil, fmt.Errorf("%s has %w (sha256 %s, manifest says %s)", o.Path, ErrChanged, got.SHA256, o.SHA256)
			}
		}
	}
	return &m, nil
}

// HashFile records a whole file (annotations, direct answers, a task file)
// for a manifest.
func HashFile(path, role string) (Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return Entry{}, err
	}
	return Entry{Path: path, Role: role, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n}, nil
}

// Input is an input file read as a stream: opened on the first read,
// hashed as it is read, and closed at its end, so that many inputs cost
// one descriptor at a time.
type Input struct {
	path string
	f    *os.File
	h    hash.Hash
	n    int64
	// read is n for other goroutines: a progress line reads it while the
	// input is being read.
	read atomic.Int64
	eof  bool
	err  error
}

// OpenInput returns the input at path, not yet opened.
func OpenInput(path string) *Input { return &Input{path: path, h: sha256.New()} }

// Read reads the file, hashing what it reads.
func (in *Input) Read(p []byte) (int, error) {
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
	in.read.Store(in.n)
	if err == io.EOF {
		in.eof = true
		in.f.Close()
	}
	return n, err
}

// Path is the input's path.
func (in *Input) Path() string { return in.path }

// BytesRead is how much of the input has been read so far; it may be called
// while another goroutine reads.
func (in *Input) BytesRead() int64 { return in.read.Load() }

// Close closes the file if it is still open.
func (in *Input) Close() {
	if in.f != nil && !in.eof {
		in.f.Close()
	}
}

// Entry is the input's entry for a manifest: what was read of it.
func (in *Input) Entry(role string) Entry {
	return Entry{Path: in.path, Role: role, SHA256: hex.EncodeToString(in.h.Sum(nil)), Bytes: in.n}
}
