package main

import (
	"embed"
	"strings"
)

// helpFiles hold the commands' long help texts, one file a command:
// help/timeaware.txt for the root, help/synth-traveler.txt for "synth
// traveler". Prose is kept out of the code that wires the command; a test
// holds every file to its command and every command to its file.
//
//go:embed help
var helpFiles embed.FS

// longHelp is the long help of the command at path ("synth traveler"; ""
// for the root).
func longHelp(path string) string {
	b, err := helpFiles.ReadFile(helpFile(path))
	if err != nil {
		panic("cmd/timeaware: no help text for " + path + ": " + err.Error())
	}
	return strings.TrimSuffix(string(b), "\n")
}

// helpFile is the file of the long help of the command at path.
func helpFile(path string) string {
	if path == "" {
		return "help/timeaware.txt"
	}
	return "help/" + strings.ReplaceAll(path, " ", "-") + ".txt"
}
