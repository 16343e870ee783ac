package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// otherVariables are TIMEAWARE_* variables that other parts of the toolkit
// read (the Python adapter, the test suites, the benchmarks): not config
// keys, and not misspellings of one.
var otherVariables = []string{
	"TIMEAWARE_URL", "TIMEAWARE_CONNECT_TIMEOUT_S", "TIMEAWARE_DEADLINE_S", "TIMEAWARE_FALLBACK_SCORE",
	"TIMEAWARE_MAX_BATCH", "TIMEAWARE_MAX_CONSECUTIVE_FALLBACKS", "TIMEAWARE_MAX_INFLIGHT", "TIMEAWARE_MAX_WAIT_MS",
	"TIMEAWARE_ON_UNREACHABLE", "TIMEAWARE_RETRIES", "TIMEAWARE_TIMEOUT_S", "TIMEAWARE_TIMER_FIELD", "TIMEAWARE_TOOL_NAME",
	"TIMEAWARE_BIN", "TIMEAWARE_SHARED",
}

// otherPrefixes likewise: the benchmarks' settings.
var otherPrefixes = []string{"TIMEAWARE_BENCH_"}

// envName is the variable that sets a config key.
func envName(key string) string {
	return "TIMEAWARE_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// warnUnknownVariables writes a warning for every TIMEAWARE_* variable of
// environ that sets no config key and is read by nothing else, naming the
// closest key's variable: a misspelt variable would otherwise be ignored
// without a word.
func warnUnknownVariables(w io.Writer, environ []string) {
	known := map[string]string{}
	for key := range defaults {
		known[envName(key)] = key
	}
	var names []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "TIMEAWARE_") || slices.Contains(otherVariables, name) {
			continue
		}
		if _, ok := known[name]; ok {
			continue
		}
		other := false
		for _, p := range otherPrefixes {
			other = other || strings.HasPrefix(name, p)
		}
		if !other {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		best, bestD := "", -1
		for env := range known {
			if d := editDistance(name, env); bestD < 0 || d < bestD || d == bestD && env < best {
				best, bestD = env, d
			}
		}
		fmt.Fprintf(w, "timeaware: warning: %s is not a config variable and is ignored; did you mean %s (%s)?\n", name, best, known[best])
	}
}

// editDistance is the Levenshtein distance of two strings' bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// environ is os.Environ, for the warning.
var environ = os.Environ
