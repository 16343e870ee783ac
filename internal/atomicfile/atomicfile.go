// Package atomicfile writes files that appear whole or not at all: a
// reader of the path sees the old file (or none) until Commit, and then
// the complete new one.
//
// On Linux the data goes to an unnamed temporary file in the target's
// directory (O_TMPFILE), linked into the directory only at Commit, so a
// process killed before then, even by SIGKILL, leaves nothing behind.
// Elsewhere, or on a file system without O_TMPFILE, it goes to a hidden
// file beside the target named .NAME.tmp-PID-RANDOM; Create first removes
// such files of the same target whose writing process is gone, so a killed
// run's leftovers go at the next run on the same output.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Perm is the mode of the files written: datasets are read by other users
// and jobs, as with os.Create under the usual umask.
const Perm = 0o644

// File is an output being written. It is not safe for concurrent use.
type File struct {
	path string
	f    *os.File
	// named is the temporary file's path when it has one (the fallback);
	// empty for an unnamed O_TMPFILE file.
	named string
	done  bool
}

// useTmpfile is false in tests that exercise the named fallback.
var useTmpfile = true

// Create starts the output at path. Its directory must exist.
//
// Errors of this package are *fs.PathError values naming the output's
// path, as the os package's are, so that a caller can tell the file
// system's refusals from its own errors.
func Create(path string) (*File, error) {
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("directory %s does not exist", dir)}
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		// Found now, before any work: a rename at the end would fail.
		return nil, &fs.PathError{Op: "create", Path: path, Err: ErrIsDir}
	}
	RemoveStale(path)
	if useTmpfile {
		if f, err := openTmpfile(dir); err == nil {
			return &File{path: path, f: f}, nil
		}
	}
	named := TempPath(path)
	f, err := os.OpenFile(named, os.O_WRONLY|os.O_CREATE|os.O_EXCL, Perm)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: path, Err: unwrapPath(err)}
	}
	return &File{path: path, f: f, named: named}, nil
}

// ErrIsDir is Create's error for a path that names a directory.
var ErrIsDir = errors.New("is a directory; name a file")

// CreateAll is Create, making path's directory and those above it first,
// as `mkdir -p` would.
func CreateAll(path string) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, &fs.PathError{Op: "create", Path: path, Err: DirError(err)}
	}
	return Create(path)
}

// TempPath returns a new name for a temporary file of path, beside it:
// .NAME.tmp-PID-RANDOM, which RemoveStale removes once process PID is gone.
func TempPath(path string) string {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return filepath.Join(filepath.Dir(path), tempName(filepath.Base(path), os.Getpid())+hex.EncodeToString(r[:]))
}

// tempName is the prefix of the named temporary files of base written by
// process pid.
func tempName(base string, pid int) string {
	return "." + base + ".tmp-" + strconv.Itoa(pid) + "-"
}

// Path returns the path the file will have after Commit.
func (a *File) Path() string { return a.path }

// Write writes to the temporary file.
func (a *File) Write(p []byte) (int, error) {
	n, err := a.f.Write(p)
	if err != nil {
		err = &fs.PathError{Op: "write", Path: a.path, Err: unwrapPath(err)}
	}
	return n, err
}

// Commit flushes the data to disk and puts the file at its path, replacing
// any file there. After an error nothing is left behind.
func (a *File) Commit() error {
	if a.done {
		return nil
	}
	named, err := a.Prepare()
	if err != nil {
		return err
	}
	if err := os.Rename(named, a.path); err != nil {
		os.Remove(named)
		return &fs.PathError{Op: "commit", Path: a.path, Err: unwrapPath(err)}
	}
	return nil
}

// Prepare flushes the data to disk and gives the file a hidden temporary
// name beside its target, which it returns. The file is then the caller's,
// to rename into place or remove (Commit is Prepare and the rename): Abort
// and Commit leave it alone. After an error nothing is left behind.
func (a *File) Prepare() (string, error) {
	if a.done {
		return "", &fs.PathError{Op: "commit", Path: a.path, Err: os.ErrClosed}
	}
	a.done = true
	err := a.f.Sync()
	if err == nil && a.named == "" {
		err = a.link()
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(a.named, Perm) // the umask may have narrowed it
	}
	if err != nil {
		if a.named != "" {
			os.Remove(a.named)
		}
		return "", &fs.PathError{Op: "commit", Path: a.path, Err: unwrapPath(err)}
	}
	return a.named, nil
}

// link gives the unnamed file a temporary name beside its target, from
// which Commit renames it (a link cannot replace an existing file).
func (a *File) link() error {
	for range 10 {
		named := TempPath(a.path)
		err := linkTmpfile(a.f, named)
		if err == nil {
			a.named = named
			return nil
		}
		if !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	return errors.New("no free temporary name")
}

// Abort discards the file; it is a no-op after Commit.
func (a *File) Abort() {
	if a.done {
		return
	}
	a.done = true
	a.f.Close()
	if a.named != "" {
		os.Remove(a.named)
	}
}

// WriteFile writes data to path atomically, creating its directory.
func WriteFile(path string, data []byte) error {
	f, err := CreateAll(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// legacyAge is how old a leftover of the earlier naming (.NAME.tmp-DIGITS,
// no writer recorded) must be before Create removes it.
const legacyAge = time.Hour

// RemoveStale removes the temporary files of path (TempPath) whose writer
// is no longer running, and old ones of the earlier naming. Errors are
// ignored: cleaning up is a courtesy, never a reason to fail a run.
func RemoveStale(path string) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + base + ".tmp-"
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || e.IsDir() {
			continue
		}
		pidText, _, twoParts := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			continue
		}
		full := filepath.Join(dir, e.Name())
		if twoParts {
			if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
				os.Remove(full)
			}
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > legacyAge {
			os.Remove(full)
		}
	}
}

// DirError is the reason os.MkdirAll failed to make the directories of an
// output, naming the one at fault: "out/x is not a directory" when a file
// is in the way, "cannot create out/x: permission denied" otherwise.
func DirError(err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return err
	}
	if errors.Is(pe.Err, syscall.ENOTDIR) || errors.Is(pe.Err, syscall.EEXIST) {
		return fmt.Errorf("%s is not a directory", pe.Path)
	}
	return fmt.Errorf("cannot create %s: %w", pe.Path, pe.Err)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
