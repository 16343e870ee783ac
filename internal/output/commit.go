package output

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/timeaware/timeaware/internal/atomicfile"
	"github.com/timeaware/timeaware/internal/commitfs"
)

// Commit puts the files in place and the manifest m at mp beside them (m
// nil: the files alone), so that after it returns, whatever happened, each
// path holds its previous file (or none, as before) or its new one, never
// a mix of the two runs:
//
//  1. The files and the manifest are written to hidden temporary files
//     beside their targets and flushed to disk; nothing at the targets has
//     changed yet, and a failure here (a full disk) removes them.
//  2. A journal (.<manifest>.commit-RANDOM, locked while the commit runs)
//     records the targets; each target already there gets a hidden backup
//     (.<name>.bak-RANDOM): a second name, or on a file system without
//     hard links the file itself, renamed away.
//  3. The files are renamed onto their targets, the manifest last, and the
//     directories synced. If any step fails, every target is given back
//     its backup and the new files are removed.
//  4. The backups and the journal are removed.
//
// A process killed during step 3 leaves a mix, which its manifest gives
// away (ReadManifest's SHA-256 check; a newer manifest is in place only
// once every file is): the next Commit to the same manifest finds the
// journal no longer locked and finishes the job, putting the backups back
// unless the new manifest made it into place, in which case it removes
// them. A failed rollback leaves its journal to the next Commit the same
// way. Two runs committing the same outputs at once are not supported.
//
// With one file and no manifest (or a manifest alone) the rename is the
// whole commit. Commit ends every file: Abort is then a no-op. ctx only
// carries the file system (package internal/commitfs, for tests): a
// commit once started is not cancelled.
func Commit(ctx context.Context, mp string, m *Manifest, files ...*File) error {
	c := &commit{fs: commitfs.From(ctx)}
	err := c.stage(mp, m, files)
	if err == nil {
		err = c.run()
	}
	return err
}

// target is a file of a commit: where it goes, the temporary file it is
// renamed from and the backup of the file it replaces.
type target struct {
	Path   string `json:"path"`             // absolute
	Temp   string `json:"temp"`             // absolute
	Backup string `json:"backup,omitempty"` // absolute; empty: there was no file
	SHA256 string `json:"sha256"`           // of the new file

	name string // Path as given, for messages
	// backedUp says the backup was made, linked says as a second name of
	// the file rather than by renaming it away.
	backedUp, linked bool
}

// journal is what a commit records before it changes anything, so that
// the next commit to the same manifest can finish it.
type journal struct {
	// Targets are in renaming order: the manifest, when there is one, last.
	Targets []target `json:"targets"`
}

type commit struct {
	fs      commitfs.FS
	anchor  string // the manifest's path, or the only file's
	targets []target
	jpath   string
	jfile   commitfs.File
}

// stage writes every file to its temporary name (step 1). On an error
// nothing is left behind and every file is ended.
func (c *commit) stage(mp string, m *Manifest, files []*File) (err error) {
	var manifest []byte
	if m != nil {
		b, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			abortFiles(files)
			return fmt.Errorf("writing %s: %w", mp, err)
		}
		manifest = append(b, '\n')
		c.anchor = mp
	} else if len(files) > 0 {
		c.anchor = files[0].path
	} else {
		return nil
	}
	defer func() {
		if err != nil {
			abortFiles(files)
			c.removeTemps()
		}
	}()
	if err := recoverCommits(c.fs, c.anchor); err != nil {
		return fmt.Errorf("writing %s: %w", c.anchor, err)
	}
	for _, f := range files {
		tmp, err := f.f.Prepare()
		if err != nil {
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
		if err := c.add(f.path, tmp, f.SHA256()); err != nil {
			return err
		}
	}
	if m == nil {
		return nil
	}
	atomicfile.RemoveStale(mp)
	tmp := atomicfile.TempPath(mp)
	if err := writeNew(c.fs, tmp, manifest); err != nil {
		return fmt.Errorf("writing %s: %w", mp, err)
	}
	sum := sha256.Sum256(manifest)
	return c.add(mp, tmp, hex.EncodeToString(sum[:]))
}

func (c *commit) add(path, tmp, sha string) error {
	t := target{Temp: tmp, SHA256: sha, name: path}
	abs, err := filepath.Abs(path)
	if err == nil {
		t.Temp, err = filepath.Abs(tmp)
	}
	t.Path = abs
	c.targets = append(c.targets, t) // before the error, so that its temporary file goes
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// abortFiles ends the files not yet ended.
func abortFiles(files []*File) {
	for _, f := range files {
		f.Abort()
	}
}

// writeNew writes data to the new file name and flushes it to disk; on an
// error it removes the file.
func writeNew(fsys commitfs.FS, name string, data []byte) error {
	f, err := fsys.Create(name)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fsys.Remove(name)
	}
	return err
}

// errNotAFile is a target taken by something that is not a file.
var errNotAFile = errors.New("something other than a file is in the way")

// run puts the staged files in place (steps 2 to 4).
func (c *commit) run() error {
	if len(c.targets) == 0 {
		return nil
	}
	if len(c.targets) == 1 {
		t := c.targets[0]
		if err := c.fs.Rename(t.Temp, t.Path); err != nil {
			c.fs.Remove(t.Temp)
			return fmt.Errorf("writing %s: %w", t.name, err)
		}
		return nil
	}
	for i := range c.targets {
		t := &c.targets[i]
		st, err := os.Lstat(t.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			c.removeTemps()
			return fmt.Errorf("writing %s: %w", t.name, err)
		case !st.Mode().IsRegular() && st.Mode()&fs.ModeSymlink == 0:
			c.removeTemps()
			return fmt.Errorf("writing %s: %w", t.name, errNotAFile)
		default:
			t.Backup = hiddenPath(t.Path, ".bak-")
		}
	}
	if err := c.writeJournal(); err != nil {
		c.removeTemps()
		return fmt.Errorf("writing %s: %w", c.anchor, err)
	}
	defer c.jfile.Close() // and unlocked
	for i := range c.targets {
		t := &c.targets[i]
		if t.Backup == "" {
			continue
		}
		t.linked = c.fs.Link(t.Path, t.Backup) == nil
		if !t.linked {
			if err := c.fs.Rename(t.Path, t.Backup); err != nil {
				return c.rollback(0, fmt.Errorf("writing %s: keeping the previous file: %w", t.name, err))
			}
		}
		t.backedUp = true
	}
	if err := c.syncDirs(); err != nil {
		return c.rollback(0, fmt.Errorf("writing %s: %w", c.anchor, err))
	}
	for i, t := range c.targets {
		if err := c.fs.Rename(t.Temp, t.Path); err != nil {
			return c.rollback(i, fmt.Errorf("writing %s: %w", t.name, err))
		}
	}
	if err := c.syncDirs(); err != nil {
		return c.rollback(len(c.targets), fmt.Errorf("writing %s: %w", c.anchor, err))
	}
	var errs []error
	for _, t := range c.targets {
		if t.Backup != "" {
			errs = append(errs, removeIfThere(c.fs, t.Backup))
		}
	}
	if errors.Join(errs...) == nil {
		c.fs.Remove(c.jpath)
	}
	// Otherwise the journal stays, and the next commit removes the
	// backups: this one has succeeded.
	return nil
}

// writeJournal creates and locks the journal and records the targets in
// it. The journal is created, then locked: a commit recovering journals
// in that instant would take it for a dead one's, empty, and remove it,
// which costs this commit no more than its crash recovery.
func (c *commit) writeJournal() error {
	c.jpath = journalPath(c.anchor)
	b, err := json.Marshal(journal{Targets: c.targets})
	if err != nil {
		return err
	}
	f, err := c.fs.Create(c.jpath)
	if err != nil {
		return err
	}
	if err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
		if _, err = f.Write(b); err == nil {
			err = f.Sync()
		}
	}
	if err != nil {
		f.Close()
		c.fs.Remove(c.jpath)
		return err
	}
	c.jfile = f
	return nil
}

// syncDirs syncs the directories of the targets and the journal.
func (c *commit) syncDirs() error {
	seen := map[string]bool{}
	for _, p := range append([]string{c.jpath}, c.paths()...) {
		dir := filepath.Dir(p)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if err := c.fs.SyncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

func (c *commit) paths() []string {
	out := make([]string, len(c.targets))
	for i, t := range c.targets {
		out[i] = t.Path
	}
	return out
}

// rollback gives every target its previous file back, the first renamed
// targets having their new file in place, and returns err. The journal
// goes once all is back; if something cannot be put back it stays, for
// the next commit to finish the job.
func (c *commit) rollback(renamed int, err error) error {
	var errs []error
	for i := len(c.targets) - 1; i >= 0; i-- {
		t := c.targets[i]
		switch {
		case t.backedUp && t.linked && i >= renamed:
			errs = append(errs, removeIfThere(c.fs, t.Backup)) // the file in place is the previous one
		case t.backedUp:
			errs = append(errs, putBack(c.fs, t))
		case t.Backup == "" && i < renamed:
			errs = append(errs, removeIfThere(c.fs, t.Path))
		}
		if i >= renamed {
			errs = append(errs, removeIfThere(c.fs, t.Temp))
		}
	}
	if rerr := errors.Join(errs...); rerr != nil {
		return fmt.Errorf("%w; putting the previous files back: %w (the next run on %s finishes it)", err, rerr, c.anchor)
	}
	c.fs.Remove(c.jpath)
	return err
}

// removeTemps removes the staged temporary files.
func (c *commit) removeTemps() {
	for _, t := range c.targets {
		c.fs.Remove(t.Temp)
	}
}

// putBack renames t's backup onto its target and removes it: a backup
// that is a second name of the file in place survives the rename. A
// backup that is not there was never made, or was already put back.
func putBack(fsys commitfs.FS, t target) error {
	if err := fsys.Rename(t.Backup, t.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return removeIfThere(fsys, t.Backup)
}

func removeIfThere(fsys commitfs.FS, name string) error {
	if err := fsys.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// hiddenPath is a new hidden name beside path: .NAME<kind>RANDOM.
func hiddenPath(path, kind string) string {
	var r [6]byte
	_, _ = rand.Read(r[:])
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+kind+hex.EncodeToString(r[:]))
}

const journalKind = ".commit-"

func journalPath(anchor string) string { return hiddenPath(anchor, journalKind) }

// recoverCommits finishes the commits to anchor whose process died before
// they did (their journals are no longer locked): a commit whose last
// target, the manifest, has its new file is complete and loses its
// backups; any other is undone, its targets given their backups back.
func recoverCommits(fsys commitfs.FS, anchor string) error {
	dir := filepath.Dir(anchor)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil // the commit itself will say what is wrong
	}
	prefix := "." + filepath.Base(anchor) + journalKind
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || e.IsDir() {
			continue
		}
		if err := recoverCommit(fsys, filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("finishing an interrupted commit (%s): %w", e.Name(), err)
		}
	}
	return nil
}

func recoverCommit(fsys commitfs.FS, jpath string) error {
	f, err := os.Open(jpath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil // a live commit's
		}
		return err
	}
	// Locked: the owner is gone, unless it finished and removed the
	// journal between the open and the lock.
	opened, err := f.Stat()
	if err != nil {
		return err
	}
	if now, err := os.Stat(jpath); err != nil || !os.SameFile(opened, now) {
		return nil
	}
	var j journal
	dec := json.NewDecoder(f)
	if err := dec.Decode(&j); err != nil || len(j.Targets) == 0 {
		// Written in full before anything else is touched: an unfinished
		// journal is all there is of its commit.
		return removeIfThere(fsys, jpath)
	}
	last := j.Targets[len(j.Targets)-1]
	done := hasHash(last.Path, last.SHA256)
	var errs []error
	for i := len(j.Targets) - 1; i >= 0; i-- {
		t := j.Targets[i]
		switch {
		case done && t.Backup != "":
			errs = append(errs, removeIfThere(fsys, t.Backup))
		case t.Backup != "":
			errs = append(errs, putBack(fsys, t))
		case !done && hasHash(t.Path, t.SHA256):
			errs = append(errs, removeIfThere(fsys, t.Path))
		}
		errs = append(errs, removeIfThere(fsys, t.Temp))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return removeIfThere(fsys, jpath)
}

// hasHash reports whether path is a file with the SHA-256 sha.
func hasHash(path, sha string) bool {
	e, err := HashFile(path, "")
	return err == nil && e.SHA256 == sha
}
