package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/timeaware/timeaware/internal/output"
)

func (a *app) pairsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "pairs",
		Short: "DPO preference pairs from human-labelled tool-use trajectories",
	}
	cmd.AddCommand(a.pairsBuildCmd())
	return groupCommand(cmd)
}

// What several commands share: their side files, and how their summaries
// render counts, fractions, agreement and sizes.

// readSideFile opens, reads and hashes a whole side file that config key
// names (a missing file is named by where the key was set), named by the
// flag of its role (annotations_file is --annotations-file).
func readSideFile[T any](a *app, key, path, role string, read func(io.Reader, string) (T, error)) (T, output.Entry, error) {
	var zero T
	flag := strings.ReplaceAll(role, "_", "-")
	a.named(flag, path)
	in := output.OpenInput(path)
	defer in.Close()
	if _, err := os.Stat(path); err != nil {
		return zero, output.Entry{}, a.keyFileError(key, flag, path, err)
	}
	v, err := read(in, path)
	if err != nil {
		return zero, output.Entry{}, err
	}
	mf := in.Entry("")
	mf.Role = role
	return v, mf, nil
}

// mapList renders a map as "a 1, b 2" in key order, "-" when empty.
func mapList[V any](m map[string]V, value func(V) string) string {
	if len(m) == 0 {
		return "-"
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + value(m[k])
	}
	return strings.Join(parts, ", ")
}

func countList(m map[string]int) string { return mapList(m, strconv.Itoa) }

func fractionList(m map[string]float64) string {
	return mapList(m, func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) })
}

func fmtAlpha(a *float64) string {
	if a == nil {
		return "n/a (no sample has two votes)"
	}
	return fmt.Sprintf("%.4f", *a)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
