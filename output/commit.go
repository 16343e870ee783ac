package output

import (
	"fmt"
	"os"
)

// Commit puts the files in place and writes the manifest m at mp. If a
// file or the manifest cannot be written, the files already put in place
// are removed again, so that outputs and manifest never disagree.
func Commit(mp string, m *Manifest, files ...*File) error {
	for i, f := range files {
		if err := f.Commit(); err != nil {
			for _, done := range files[:i] {
				os.Remove(done.path)
			}
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
	}
	if err := WriteManifest(mp, m); err != nil {
		for _, f := range files {
			os.Remove(f.path)
		}
		return fmt.Errorf("writing %s: %w", mp, err)
	}
	return nil
}
