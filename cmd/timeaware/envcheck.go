package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/timeaware/timeaware/internal/suggest"
)

// otherVariables are TIMEAWARE_* variables that other parts of the toolkit
// read (the Python adapter, python/README.md; the test suites; the
// benchmarks): not config keys, and not misspellings of one. A test checks
// that every variable the adapter, the tests and the docs name is here or
// is a config key's.
var otherVariables = []string{
	// The Python adapter (timeaware.client, timeaware.verl, timeaware.tools).
	"TIMEAWARE_URL", "TIMEAWARE_CONNECT_TIMEOUT_S", "TIMEAWARE_DEADLINE_S", "TIMEAWARE_FALLBACK_SCORE",
	"TIMEAWARE_MAX_BATCH", "TIMEAWARE_MAX_CONSECUTIVE_FALLBACKS", "TIMEAWARE_MAX_INFLIGHT", "TIMEAWARE_MAX_WAIT_MS",
	"TIMEAWARE_ON_UNREACHABLE", "TIMEAWARE_RETRIES", "TIMEAWARE_TIMEOUT_S", "TIMEAWARE_TIMER_FIELD", "TIMEAWARE_TOOL_NAME",
	// The rollout log's directory (timeaware.scoring), and the reward of
	// bare ground truths in timeaware.openrlhf's reward file.
	"TIMEAWARE_ROLLOUT_LOG", "TIMEAWARE_OPENRLHF_DATA_SOURCE",
	// The OpenEnv server's address, for timeaware.openenv.TimelySession,
	// and the bearer token it requires of its clients.
	"TIMEAWARE_OPENENV_URL", "TIMEAWARE_OPENENV_TOKEN",
	// The test suites and CI.
	"TIMEAWARE_BIN", "TIMEAWARE_SHARED", "TIMEAWARE_REQUIRE_DEBIAN_TOOLS",
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
	// Suggestions compare what follows the prefix, which every candidate
	// shares: the prefix must not make a distant name look close.
	var suffixes []string
	for env := range known {
		suffixes = append(suffixes, strings.TrimPrefix(env, "TIMEAWARE_"))
	}
	for _, name := range names {
		fmt.Fprintf(w, "timeaware: warning: %s is not a config variable and is ignored%s\n", name,
			suggest.DidYouMean(strings.TrimPrefix(name, "TIMEAWARE_"), suffixes, func(s string) string {
				return "TIMEAWARE_" + s + " (" + known["TIMEAWARE_"+s] + ")"
			}))
	}
}

// environ is os.Environ, for the warning.
var environ = os.Environ
