package output

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"path/filepath"
	"strings"

	"github.com/timeaware/timeaware/internal/atomicfile"
)

// File is an output being written: whole or not at all, its bytes counted
// and hashed for the manifest.
type File struct {
	path string
	f    *atomicfile.File
	h    hash.Hash
	n    int64
}

// Create starts the output at path, creating its directory and those
// above it as `mkdir -p` would: every command treats a missing output
// directory the same way. Errors are *fs.PathError values naming path.
func Create(path string) (*File, error) {
	f, err := atomicfile.CreateAll(path)
	if err != nil {
		return nil, err
	}
	return &File{path: path, f: f, h: sha256.New()}, nil
}

// Write writes to the file, counting and hashing the bytes.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.f.Write(p)
	f.h.Write(p[:n])
	f.n += int64(n)
	return n, err
}

// Path is where the file is put by Commit.
func (f *File) Path() string { return f.path }

// Bytes counts the bytes written.
func (f *File) Bytes() int64 { return f.n }

// SHA256 is the hexadecimal SHA-256 of the bytes written.
func (f *File) SHA256() string { return hex.EncodeToString(f.h.Sum(nil)) }

// Commit flushes the data to disk and puts the file in place, with no
// manifest: Commit (the package function) with this file alone.
func (f *File) Commit() error { return Commit(context.Background(), "", nil, f) }

// Abort discards the file; it is a no-op after Commit.
func (f *File) Abort() { f.f.Abort() }

// Entry is the file's entry for a manifest.
func (f *File) Entry(role, format string, rows *int) Entry {
	return Entry{Path: f.path, Role: role, Format: format, SHA256: f.SHA256(), Bytes: f.n, Rows: rows}
}

// SidePath puts a side before a path's extension: pairs.parquet and train
// make pairs-train.parquet.
func SidePath(out, side string) string {
	ext := filepath.Ext(out)
	return strings.TrimSuffix(out, ext) + "-" + side + ext
}
