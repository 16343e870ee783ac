package main

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpFilesAreTheCommandsHelp holds help/ to the commands: every file
// is the long help of the command its name gives, shown as written, and
// every command with a long help reads it from its file.
func TestHelpFilesAreTheCommandsHelp(t *testing.T) {
	files := map[string]bool{}
	require.NoError(t, fs.WalkDir(helpFiles, "help", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files[p] = true
		}
		return err
	}))
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "timeaware"), " ")
		if first, _, _ := strings.Cut(path, " "); first == "help" || first == "completion" {
			return // cobra's own commands, with cobra's texts
		}
		if c.Long != "" {
			f := helpFile(path)
			if assert.True(t, files[f], "%q has a long help but no %s", c.CommandPath(), f) {
				b, err := helpFiles.ReadFile(f)
				require.NoError(t, err)
				assert.Equal(t, strings.TrimSuffix(string(b), "\n"), c.Long, f)
			}
			delete(files, f)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk((&app{v: newViper()}).rootCmd())
	assert.Empty(t, files, "help files of no command")
}
