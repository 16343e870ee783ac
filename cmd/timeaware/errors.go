package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	gojson "github.com/goccy/go-json"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/timeaware/timeaware/internal/jsonscan"
	"github.com/timeaware/timeaware/internal/suggest"
)

// Exit codes shared by every command; docs/cli.md lists them.
const (
	exitOK    = 0
	exitData  = 1 // an input's data is wrong, the run failed, or a check found a problem
	exitUsage = 2 // the command line, a config key or a TIMEAWARE_* variable is wrong
	exitIO    = 3 // a file or directory could not be read or written
)

// usageError marks errors caused by the command line or the configuration
// rather than the data.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// fileError is the error about a file a flag (or an argument) named, in
// the one shape every command uses: "--flag PATH: reason", or "PATH:
// reason" for an argument. Its exit code is that of the error it wraps: 3
// when the file system refused, 1 for the data.
type fileError struct {
	flag, path string
	err        error
}

func (e *fileError) Error() string {
	reason := message(sayOnce(e.path, pathReason(e.path, e.err)))
	reason = strings.TrimPrefix(reason, e.path+": ")
	if e.flag == "" {
		return e.path + ": " + reason
	}
	return "--" + e.flag + " " + e.path + ": " + reason
}

func (e *fileError) Unwrap() error { return e.err }

// pathError is the error about the file that --flag (or, with flag "",
// an argument) named.
func pathError(flag, path string, err error) error {
	return &fileError{flag: flag, path: path, err: err}
}

// keyFileError is the error about the file that config key names and that
// flag sets: named by the flag when the flag gave it, else by where the
// key was set (a variable, the config file and key), with the file
// system's reason and exit code.
func (a *app) keyFileError(key, flag, path string, err error) error {
	if where := a.origin(key); where == "--"+flag || where == key {
		return pathError(flag, path, err)
	}
	return fmt.Errorf("%s: %w", a.setting(key, path), pathReason(path, err))
}

// pathReason is err without the "op PATH: " that a *fs.PathError about
// path adds: what to say after a message that already names path.
func pathReason(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return pe.Err
	}
	return err
}

// isFileSystemError reports whether err, or an error it wraps, is the file
// system's refusal to open, read, write, rename or link a path: a
// *fs.PathError or *os.LinkError, or the errno of one that a library kept
// without the path (a network's errno is not one).
func isFileSystemError(err error) bool {
	var (
		pe    *fs.PathError
		le    *os.LinkError
		errno syscall.Errno
	)
	if errors.As(err, &pe) || errors.As(err, &le) {
		return true
	}
	return errors.As(err, &errno) && slices.Contains(fileErrnos, errno)
}

// fileErrnos are the errors of the file system, as opposed to a network's.
var fileErrnos = []syscall.Errno{
	syscall.ENOENT, syscall.EACCES, syscall.EPERM, syscall.ENOTDIR, syscall.EISDIR, syscall.ENOSPC,
	syscall.EIO, syscall.EROFS, syscall.EDQUOT, syscall.EMFILE, syscall.ENFILE, syscall.ELOOP, syscall.ENAMETOOLONG,
}

// exitCode is the documented exit code of a command's error. A usage error
// wins over the I/O error it wraps: the flag or key is what to fix.
func exitCode(err error) int {
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	case isFileSystemError(err):
		return exitIO
	default:
		return exitData
	}
}

// internalPackages are the names of the module's library packages. Their
// errors start with the package's name (the Go convention for library
// users); a command line user reads the flag, the file and the reason, so
// the CLI drops these prefixes. A test keeps the list in step with the
// module's packages.
var internalPackages = []string{
	"agreement", "atomicfile", "benchmarks", "budget", "chat", "commitfs", "conversation", "dataset", "eval", "jsonscan",
	"memlimit", "negotiation", "output", "pace", "prefpairs", "progress", "puzzles", "rewards", "scenario", "seal", "shard", "splits", "suggest", "synth", "timers",
	"timestamps", "tokenizer", "traveler", "verifier",
}

var packagePrefix = regexp.MustCompile(`(^|: )(?:` + strings.Join(internalPackages, "|") + `): `)

// message is the text of a command's error as the user reads it: the
// library packages' prefixes removed wherever a wrapped error adds one, and
// a decoder's error that no library explained said in JSON's or YAML's
// words (plainDecoderText).
func message(err error) string {
	msg := plainDecoderText(err, err.Error())
	for {
		next := packagePrefix.ReplaceAllString(msg, "$1")
		if next == msg {
			return msg
		}
		msg = next
	}
}

// plainDecoderText replaces in msg the text of a decoder's error that
// reached the command as the decoder wrote it ("cannot unmarshal number
// into Go struct field …") by jsonscan's words for it: whichever way an
// error comes, no Go type name reaches the user.
func plainDecoderText(err error, msg string) string {
	var (
		ste *json.UnmarshalTypeError
		gte *gojson.UnmarshalTypeError
		yte *yaml.TypeError
	)
	if errors.As(err, &ste) {
		msg = strings.Replace(msg, ste.Error(), jsonscan.Explain("", nil, ste).Error(), 1)
	}
	if errors.As(err, &gte) {
		msg = strings.Replace(msg, gte.Error(), jsonscan.Explain("", nil, gte).Error(), 1)
	}
	if errors.As(err, &yte) {
		msg = strings.Replace(msg, yte.Error(), jsonscan.ExplainYAML(yte).Error(), 1)
	}
	return msg
}

// named records that the flag named these inputs: an error a library
// returns about one of them, or a file inside one, starts with its path,
// and describe puts the flag in front.
func (a *app) named(flag string, paths ...string) {
	if a.inputFlags == nil {
		a.inputFlags = map[string]string{}
	}
	for _, p := range paths {
		a.inputFlags[p] = flag
	}
}

// describe is the line a command's error is reported in: "--flag PATH:
// reason" (or "--flag PATH:LINE: reason", "--flag PATH, PATH2: reason")
// for an input a flag named, "PATH: reason" for an argument, and never a
// library package's name.
func (a *app) describe(err error) string {
	msg := message(err)
	if strings.HasPrefix(msg, "--") {
		return msg
	}
	best := ""
	for path := range a.inputFlags {
		prefix := strings.TrimSuffix(path, string(filepath.Separator))
		named := strings.HasPrefix(msg, prefix+": ") || strings.HasPrefix(msg, prefix+", ") ||
			strings.HasPrefix(msg, prefix+string(filepath.Separator)) || atLine(msg, prefix)
		if named && len(path) > len(best) {
			best = path
		}
	}
	if best != "" {
		return "--" + a.inputFlags[best] + " " + msg
	}
	return msg
}

// atLine says msg starts with path and a line of it: "PATH:12: reason".
func atLine(msg, path string) bool {
	rest, ok := strings.CutPrefix(msg, path+":")
	return ok && rest != "" && '0' <= rest[0] && rest[0] <= '9'
}

// flagError turns pflag's errors into usage errors in the CLI's shape,
// with a suggestion for a misspelt flag. On a command that only groups
// others, a word that is not one of them is the mistake to report, not a
// flag meant for the subcommand the user had in mind.
func flagError(cmd *cobra.Command, err error) error {
	if cmd.HasSubCommands() {
		if args := cmd.Flags().Args(); len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
	}
	var (
		ne *pflag.NotExistError
		ve *pflag.InvalidValueError
		re *pflag.ValueRequiredError
	)
	switch {
	case errors.As(err, &ne) && ne.GetSpecifiedShortnames() == "":
		name := ne.GetSpecifiedName()
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		return usagef("unknown flag --%s%s", name, suggest.DidYouMean(name, names, func(s string) string { return "--" + s }))
	case errors.As(err, &ve):
		return usagef("--%s %s: %v", ve.GetFlag().Name, showValue(ve.GetValue()), plainValueError(ve))
	case errors.As(err, &re) && re.GetSpecifiedShortnames() == "":
		return usagef("--%s needs a value", re.GetSpecifiedName())
	}
	return usageError{err}
}

// plainValueError is the reason pflag gives for a value, without the
// strconv function's name: "invalid syntax" reads better as what the flag
// wants.
func plainValueError(ve *pflag.InvalidValueError) string {
	var ne *strconv.NumError
	if errors.As(ve, &ne) {
		switch ve.GetFlag().Value.Type() {
		case "int", "int64", "uint64", "uint", "int32":
			return "want a whole number"
		case "float64", "float32":
			return "want a number"
		}
	}
	if ve.GetFlag().Value.Type() == "bool" {
		return "want true or false"
	}
	if ve.GetFlag().Value.Type() == "duration" {
		return "want a duration such as 30s or 2m"
	}
	return ve.Unwrap().Error()
}

// sayOnce is reason without the value that the message puts before it: a
// library names the value it refuses (`family "x" is not general, game or
// ml`), and "--family x: " has named it already. Only the value's quoted
// form is taken out, so no other text is touched.
func sayOnce(value string, reason error) error {
	if value == "" || reason == nil {
		return reason
	}
	q := strconv.Quote(value)
	msg := reason.Error()
	out := strings.TrimPrefix(msg, q+": ")
	if rest, ok := strings.CutPrefix(out, q+" is "); ok {
		out = rest
	}
	out = strings.ReplaceAll(out, " "+q+":", ":")
	out = strings.ReplaceAll(out, " "+q, "")
	if out == msg {
		return reason
	}
	return &restated{msg: out, err: reason}
}

// restated is an error said in other words; errors.Is and As still see
// the error it restates.
type restated struct {
	msg string
	err error
}

func (r *restated) Error() string { return r.msg }
func (r *restated) Unwrap() error { return r.err }

// showValue writes a value for an error message: as it is, unless it is
// empty or has spaces, when it is quoted.
func showValue(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"") {
		return strconv.Quote(s)
	}
	return s
}

// noArgs is cobra.NoArgs in the CLI's shape: a word after a command that
// has subcommands is a misspelt one of them (with a suggestion); after any
// other command, an argument it does not take.
func noArgs(c *cobra.Command, args []string) error {
	switch {
	case len(args) == 0:
		return nil
	case c.HasSubCommands():
		return unknownCommand(c, args[0])
	}
	return usagef("%q takes no arguments; got %q", c.CommandPath(), args[0])
}

// unknownCommand is the usage error of a word that names none of cmd's
// subcommands.
func unknownCommand(cmd *cobra.Command, word string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			names = append(names, c.Name())
			names = append(names, c.Aliases...)
		}
	}
	return usagef("unknown command %q for %q%s", word, cmd.CommandPath(), suggest.DidYouMean(word, names, strconv.Quote))
}

// groupCommand makes cmd, which only groups subcommands, refuse to run on
// its own: a misspelt subcommand (`splits chek`) or none at all is a usage
// error (exit 2), never a help text that exits 0 and lets a CI job pass.
func groupCommand(cmd *cobra.Command) *cobra.Command {
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(c, args[0])
		}
		return nil
	}
	// Runnable only to refuse to run: its usage shows its commands, not a
	// "timeaware synth [flags]" line that would say it runs alone.
	cmd.SetUsageTemplate(strings.Replace(cmd.UsageTemplate(), "{{if .Runnable}}", "{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
	cmd.RunE = func(c *cobra.Command, _ []string) error {
		var names []string
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		return usagef("%q needs a command: one of %s", c.CommandPath(), strings.Join(names, ", "))
	}
	return cmd
}
