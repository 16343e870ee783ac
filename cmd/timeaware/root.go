package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// version is set at link time (-ldflags "-X main.version=...").
var version = "0.1.0-dev"

// Exit codes shared by every command.
const (
	exitOK    = 0
	exitData  = 1 // the input or the run failed
	exitUsage = 2 // the command line was wrong
)

// usageError marks errors caused by the command line rather than the data.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// app carries what every command needs: streams and the layered config.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	v              *viper.Viper
	configFile     string
	cpuProfile     string
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
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		reached = true
		if a.cpuProfile != "" {
			f, err := os.Create(a.cpuProfile)
			if err != nil {
				return usagef("--cpuprofile: %v", err)
			}
			if err := pprof.StartCPUProfile(f); err != nil {
				return usagef("--cpuprofile: %v", err)
			}
			root.PersistentPostRun = func(*cobra.Command, []string) { pprof.StopCPUProfile(); f.Close() }
		}
		return a.loadConfig(cmd)
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	if errors.Is(err, errGateFailed) {
		fmt.Fprintln(stderr, "timeaware: splits check failed: see the report")
		return exitData
	}
	fmt.Fprintf(stderr, "timeaware: %v\n", err)
	var ue usageError
	if !reached || errors.As(err, &ue) {
		fmt.Fprintln(stderr, "Run 'timeaware --help' for usage.")
		return exitUsage
	}
	return exitData
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "timeaware",
		Short: "Training data and rewards for LLM agents that must be aware of time",
		Long: `timeaware builds what surrounds a trainer for time-aware LLM agents:
DPO preference pairs from human-labelled tool-use trajectories, scenario-level
splits, synthetic temporal tasks, and rewards.

Configuration comes from flags, then TIMEAWARE_* environment variables, then
the --config YAML file, then built-in defaults (see configs/timeaware.yaml).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       buildVersion(),
	}
	root.PersistentFlags().StringVar(&a.configFile, "config", "", "YAML config file (default: none; built-in defaults apply)")
	root.PersistentFlags().StringVar(&a.cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(a.pairsCmd(), a.splitsCmd(), a.synthCmd(), a.serveCmd(), a.scoreCmd(), a.evalCmd(), a.demoCmd())
	return root
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
	return v
}

func (a *app) loadConfig(cmd *cobra.Command) error {
	warnUnknownVariables(a.stderr, environ())
	if a.configFile != "" {
		a.v.SetConfigFile(a.configFile)
		a.v.SetConfigType("yaml")
		if err := a.v.ReadInConfig(); err != nil {
			return usagef("--config %s: %v", a.configFile, err)
		}
		for _, k := range a.v.AllKeys() {
			if _, ok := defaults[k]; !ok {
				return usagef("--config %s: unknown key %q", a.configFile, k)
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
	return checkConfig(a.v)
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
