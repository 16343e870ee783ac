package synth

// OptionError is the error of a task family's options that fail
// validation: it names the option by its config key under
// synth.<family> (jitter, years, kb, ...), so that the command can name the
// flag or key the user set.
type OptionError struct {
	Family string // the task family's package: budget, puzzles, ...
	Key    string
	Err    error
}

func (e *OptionError) Error() string { return e.Family + ": " + e.Key + ": " + e.Err.Error() }

func (e *OptionError) Unwrap() error { return e.Err }
