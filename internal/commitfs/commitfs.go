// Package commitfs is the file system as a commit of outputs (package
// output) sees it: the operating system's, or in a test one that fails on
// cue ([Faulty]). A test hands its file system to the commit through the
// context ([WithFS]), so that tests running in parallel each see their own
// and nothing global changes.
package commitfs

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"syscall"
)

// Perm is the mode of the files a commit creates (manifests, journals),
// as atomicfile.Perm is that of the data files.
const Perm = 0o644

// FS is what a commit does to the file system.
type FS interface {
	// Create creates name, which must not exist, for writing.
	Create(name string) (File, error)
	// Link gives oldname's file the second name newname.
	Link(oldname, newname string) error
	// Rename renames oldname to newname, replacing any file there.
	Rename(oldname, newname string) error
	// Remove removes name.
	Remove(name string) error
	// SyncDir flushes dir's entries (the names a commit made) to disk.
	SyncDir(dir string) error
}

// File is a file created by FS.Create.
type File interface {
	io.Writer
	Sync() error
	Close() error
	// Fd is the file's descriptor, for locking it.
	Fd() uintptr
}

// OS is the operating system's file system.
type OS struct{}

// Create creates name exclusively with mode Perm, whatever the umask.
func (OS) Create(name string) (File, error) {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, Perm)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(Perm); err != nil {
		f.Close()
		os.Remove(name)
		return nil, err
	}
	return f, nil
}

// Link is os.Link.
func (OS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

// Rename is os.Rename.
func (OS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// Remove is os.Remove.
func (OS) Remove(name string) error { return os.Remove(name) }

// SyncDir opens dir and syncs it.
func (OS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

type fsKey struct{}

// WithFS returns a context whose commits use fs.
func WithFS(ctx context.Context, fs FS) context.Context {
	return context.WithValue(ctx, fsKey{}, fs)
}

// From returns the file system of ctx's commits: the one WithFS gave, else
// OS.
func From(ctx context.Context) FS {
	if fs, ok := ctx.Value(fsKey{}).(FS); ok && fs != nil {
		return fs
	}
	return OS{}
}

// Op names an operation of FS or File.
type Op string

// The operations a Faulty file system can fail.
const (
	OpCreate  Op = "create"
	OpWrite   Op = "write"
	OpSync    Op = "sync"
	OpLink    Op = "link"
	OpRename  Op = "rename"
	OpRemove  Op = "remove"
	OpSyncDir Op = "syncdir"
)

// Call is an operation about to be made: for Link and Rename, Path is the
// old name and To the new one; for a File's Write and Sync, Path is the
// file's name.
type Call struct {
	Op   Op
	Path string
	To   string
}

// Faulty is the OS file system with a hook asked before every operation:
// an error from Fail is returned instead of making the operation. The
// calls are serialised, so Fail may keep state without locking.
type Faulty struct {
	// Fail decides each call's fate; nil lets every call through.
	Fail func(Call) error

	mu    sync.Mutex
	calls []Call
}

// ErrInjected is the error fault-injection tests usually inject: it is
// wrapped by the commit's error, which tests can look for.
var ErrInjected = errors.New("injected fault")

func (f *Faulty) ask(c Call) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, c)
	if f.Fail == nil {
		return nil
	}
	return f.Fail(c)
}

// Calls returns the calls made so far, failed ones included.
func (f *Faulty) Calls() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.calls...)
}

// Create creates name unless Fail says otherwise; the file's writes and
// syncs are asked too.
func (f *Faulty) Create(name string) (File, error) {
	if err := f.ask(Call{Op: OpCreate, Path: name}); err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	file, err := OS{}.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: file, fs: f, name: name}, nil
}

// Link links unless Fail says otherwise.
func (f *Faulty) Link(oldname, newname string) error {
	if err := f.ask(Call{Op: OpLink, Path: oldname, To: newname}); err != nil {
		return &os.LinkError{Op: "link", Old: oldname, New: newname, Err: err}
	}
	return OS{}.Link(oldname, newname)
}

// Rename renames unless Fail says otherwise.
func (f *Faulty) Rename(oldname, newname string) error {
	if err := f.ask(Call{Op: OpRename, Path: oldname, To: newname}); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return OS{}.Rename(oldname, newname)
}

// Remove removes unless Fail says otherwise.
func (f *Faulty) Remove(name string) error {
	if err := f.ask(Call{Op: OpRemove, Path: name}); err != nil {
		return &os.PathError{Op: "remove", Path: name, Err: err}
	}
	return OS{}.Remove(name)
}

// SyncDir syncs unless Fail says otherwise.
func (f *Faulty) SyncDir(dir string) error {
	if err := f.ask(Call{Op: OpSyncDir, Path: dir}); err != nil {
		return &os.PathError{Op: "sync", Path: dir, Err: err}
	}
	return OS{}.SyncDir(dir)
}

type faultyFile struct {
	File
	fs   *Faulty
	name string
}

func (f *faultyFile) Write(p []byte) (int, error) {
	if err := f.fs.ask(Call{Op: OpWrite, Path: f.name}); err != nil {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	return f.File.Write(p)
}

func (f *faultyFile) Sync() error {
	if err := f.fs.ask(Call{Op: OpSync, Path: f.name}); err != nil {
		return &os.PathError{Op: "sync", Path: f.name, Err: err}
	}
	return f.File.Sync()
}

// FailFirst returns a Faulty that fails the first call of op whose path
// satisfies match (for Link and Rename, the new name) with err.
func FailFirst(op Op, match func(path string) bool, err error) *Faulty {
	fired := false
	return &Faulty{Fail: func(c Call) error {
		p := c.Path
		if c.Op == OpRename || c.Op == OpLink {
			p = c.To
		}
		if !fired && c.Op == op && match(p) {
			fired = true
			return err
		}
		return nil
	}}
}

// DiskFullAfter returns a Faulty whose disk fills up once a file is renamed
// to path: from then on nothing that takes space succeeds (ENOSPC), nor a
// rename onto manifest, while removing files and renaming them elsewhere
// still do.
func DiskFullAfter(path, manifest string) *Faulty {
	full := false
	return &Faulty{Fail: func(c Call) error {
		if full {
			switch c.Op {
			case OpCreate, OpWrite, OpSync, OpLink, OpSyncDir:
				return syscall.ENOSPC
			case OpRename:
				if c.To == manifest {
					return syscall.ENOSPC
				}
			}
		}
		if c.Op == OpRename && c.To == path {
			full = true
		}
		return nil
	}}
}
