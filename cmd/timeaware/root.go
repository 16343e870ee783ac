package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/internal/suggest"
)

// version is set at link time (-ldflags "-X main.version=...").
var version = "0.1.0-dev"

// app carries what every command needs: streams and the layered config.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	v              *viper.Viper
	configFile     string
	cpuProfile     string
	// cmd is the command being run, once its flags are parsed: the flags
	// it has say where a config key's value came from (origin).
	cmd *cobra.Command
	// inputFlags maps each input file or directory the command was given
	// to the flag that named it, for error messages (describe).
	inputFlags map[string]string
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdin, stdout, stderr)
}

// runContext is run under parent, whose values the commands see (a test's
// file system for commits, internal/commitfs).
func runContext(parent context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, v: newViper()}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	reached := false
	stopProfile := func() {}
	defer func() { stopProfile() }()
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		reached = true
		a.cmd = cmd
		if a.cpuProfile != "" {
			f, err := os.Create(a.cpuProfile)
			if err != nil {
				return pathError("cpuprofile", a.cpuProfile, err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				return usagef("--cpuprofile: %v", err)
			}
			// Stopped when the command returns, whether it failed or not: a
			// failed gate's profile is the one wanted most.
			stopProfile = func() { pprof.StopCPUProfile(); f.Close() }
		}
		return a.loadConfig(cmd)
	}
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errGateFailed) {
		fmt.Fprintln(stderr, "timeaware: splits check failed: see the report")
		return exitData
	}
	if errors.Is(err, errContaminated) {
		fmt.Fprintln(stderr, "timeaware: splits contamination failed: see the report")
		return exitData
	}
	fmt.Fprintf(stderr, "timeaware: %s\n", a.describe(err))
	code := exitCode(err)
	if !reached && code == exitData {
		code = exitUsage // cobra's own checks of the arguments, before any command ran
	}
	if code == exitUsage {
		if cmd == nil {
			cmd = root
		}
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "timeaware",
		Short:         "Training data and rewards for LLM agents that must be aware of time",
		Long:          longHelp(""),
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion(),
	}
	root.PersistentFlags().StringVar(&a.configFile, "config", "", "YAML config file (default: none; built-in defaults apply)")
	root.PersistentFlags().StringVar(&a.cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(a.pairsCmd(), a.splitsCmd(), a.synthCmd(), a.benchmarksCmd(), a.serveCmd(), a.scoreCmd(), a.evalCmd(), a.demoCmd(), a.configCmd())
	// cobra's help and completion commands, made now so that a word they
	// do not know is a usage error too (`help chek`, `completion bsh`
	// printed help and exited 0).
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Run, c.RunE = nil, helpTopic
		case "completion":
			groupCommand(c)
		}
	}
	return groupCommand(root)
}

// helpTopic shows the help of the command that args name (the root's with
// none); a word that names no command is a usage error with a suggestion.
func helpTopic(c *cobra.Command, args []string) error {
	cur := c.Root()
	for _, w := range args {
		var next *cobra.Command
		for _, sub := range cur.Commands() {
			if sub.Name() == w || slices.Contains(sub.Aliases, w) {
				next = sub
			}
		}
		if next == nil {
			return unknownCommand(cur, w)
		}
		cur = next
	}
	return cur.Help()
}

// tuneGCForStreaming suits commands that stream records through a small,
// steady live heap while allocating many short-lived objects (pairs build):
// collecting less often buys a fifth of their time, and the soft limit keeps
// the heap bounded. GOGC or GOMEMLIMIT in the environment win. Commands
// whose live heap grows with their input (the gate's index) keep the
// runtime's defaults: a tight limit would make them collect continuously.
func tuneGCForStreaming() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(256 << 20)
	}
}

// tuneGCForServing suits the verifier service: each batch request
// allocates its decoded items and response and drops them when answered,
// so the live heap stays small while allocation is heavy. Collecting at
// four times the live heap instead of twice cuts the service's CPU per
// item by about a fifth (BenchmarkScoreBatch: 253k to 326k items/s) for a
// few tens of megabytes. GOGC or GOMEMLIMIT in the environment win.
func tuneGCForServing() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(400)
	}
}

func buildVersion() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += "+" + s.Value[:12]
			}
		}
	}
	return v
}

// newViper returns a viper with every known key defaulted, so that
// TIMEAWARE_* variables apply to all of them (viper ignores environment
// variables for keys it has never heard of).
func newViper() *viper.Viper {
	v := viper.New()
	for k, val := range defaults {
		v.SetDefault(k, val)
	}
	v.SetEnvPrefix("TIMEAWARE")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	// An empty variable sets its key to "", as an empty value in a config
	// file does (TIMEAWARE_PAIRS_GENERATE_CACHE_DIR= turns the cache off).
	v.AllowEmptyEnv(true)
	return v
}

func (a *app) loadConfig(cmd *cobra.Command) error {
	warnUnknownVariables(a.stderr, environ())
	if a.configFile != "" {
		a.v.SetConfigFile(a.configFile)
		a.v.SetConfigType("yaml")
		if err := a.v.ReadInConfig(); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				return pathError("config", a.configFile, err)
			}
			var parse viper.ConfigParseError
			if errors.As(err, &parse) {
				err = parse.Unwrap() // without viper's "While parsing config"
			}
			return usagef("--config %s: %v", a.configFile, jsonscan.ExplainYAML(err))
		}
		keys := slices.Sorted(maps.Keys(defaults))
		for _, k := range a.v.AllKeys() {
			if _, ok := defaults[k]; !ok {
				return usagef("--config %s: unknown key %s%s", a.configFile, k, suggest.DidYouMean(k, keys, func(s string) string { return s }))
			}
		}
	}
	var bindErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if key, ok := f.Annotations[configKey]; ok && bindErr == nil {
			bindErr = a.v.BindPFlag(key[0], f)
		}
	})
	if bindErr != nil {
		return bindErr
	}
	return a.checkConfig()
}

// configKey annotates a flag with the config key it overrides.
const configKey = "timeaware_config_key"

func bindKey(fs *pflag.FlagSet, flag, key string) {
	if err := fs.SetAnnotation(flag, configKey, []string{key}); err != nil {
		panic(err) // programming error: the flag does not exist
	}
	if _, ok := defaults[key]; !ok {
		panic("no default for config key " + key)
	}
}
