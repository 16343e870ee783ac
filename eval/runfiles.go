package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/internal/output"
	"github.com/timeaware/timeaware/synth/negotiation"
)

// FilesOptions configures RunFiles.
type FilesOptions struct {
	// Data are the dataset files and directories to read (ReadData).
	Data []string
	// Out is the results file: a Result a line, one per row and sample, in
	// input order, written atomically.
	Out string
	// Plot, when set, is a PNG file to draw the accuracy-against-budget
	// curves of the token-budget rows in (Report.WritePlot), written
	// atomically after Out. The rows must include some of a token-budget
	// data source (length/lcpo_exact, ...).
	Plot string
	// Model is the endpoint and model to ask. Its CacheDir, like Out, is
	// left out of Data's directories.
	Model chat.Options
	// OpponentURL and OpponentModel, when set, are the endpoint and model
	// that play the other role of negotiation rows instead of the scripted
	// opponent, with Model's other settings and Run's temperature and max
	// tokens.
	OpponentURL, OpponentModel string
	// Run configures the run; RunFiles sets its Client, Opponent and Done.
	Run Options
	// MaxErrors is the number of failed results the run tolerates: one
	// more stops it at once, so that an endpoint that is down or refuses
	// every request is not asked for hours.
	MaxErrors int
	// Report configures the report's bootstrap.
	Report ReportOptions
	// Progress, when set, is called after each finished result, one call
	// at a time, with the number of results the run makes.
	Progress func(total int)
}

// FilesReport is what RunFiles did: the report of the results, and how
// the run went. Its JSON form is the report with the endpoint, the model,
// the results file, the concurrency and the requests' counts before it.
type FilesReport struct {
	Endpoint    string     `json:"endpoint"`
	Model       string     `json:"model"`
	Results     string     `json:"results"`
	Plot        string     `json:"plot,omitempty"`
	Concurrency int        `json:"concurrency"`
	Requests    chat.Stats `json:"requests"`
	*Report
	// Rows counts the rows read and Total the results the run makes (rows
	// × samples); Done counts those finished and written, Failed those of
	// them with an error, the first three of which FirstErrors gives as
	// "request id (data source): error".
	Rows        int      `json:"-"`
	Total       int      `json:"-"`
	Done        int      `json:"-"`
	Failed      int      `json:"-"`
	FirstErrors []string `json:"-"`
	// GaveUp says the run stopped on more than MaxErrors failures;
	// Interrupted that ctx was cancelled. Either way the finished results
	// are written.
	GaveUp      bool `json:"-"`
	Interrupted bool `json:"-"`
}

// RunFiles evaluates a model on dataset files: it reads the rows
// (ReadData), checks that their rewards can read them (CheckRows), puts
// them to the model (Run), writes the finished results to Out and reports
// them (Summarize). Nothing is asked before the rows and the endpoints
// pass their checks and Out is created. When ctx is cancelled, or more
// than MaxErrors results fail, the run stops and the results that finished
// are written, the report saying so; rerun with the same cache, it asks
// nothing already answered. Errors about an option's path or URL are
// *OptionError values (Option "Data", "Out", "Endpoint" or
// "OpponentEndpoint") or, about the plot (a path that does not end in
// .png, no token-budget rows, no budget scored), of Option "Plot".
func RunFiles(ctx context.Context, opt FilesOptions) (*FilesReport, error) {
	if opt.OpponentURL != "" {
		co := opt.Model
		co.Name, co.URL, co.Model = "opponent", opt.OpponentURL, opt.OpponentModel
		oc, err := chat.New(co)
		if err != nil {
			return nil, &OptionError{Option: "OpponentEndpoint", Value: opt.OpponentURL, Invalid: true, Err: err}
		}
		opt.Run.Opponent = negotiation.ModelOpponent{Client: oc, Temperature: opt.Run.Temperature, MaxTokens: opt.Run.MaxTokens}
	}
	rows, err := ReadData(opt.Data, opt.Out, opt.Model.CacheDir)
	if err != nil {
		return nil, err
	}
	if err := CheckRows(rows, opt.Run.Rewards); err != nil {
		return nil, err
	}
	client, err := chat.New(opt.Model)
	if err != nil {
		return nil, &OptionError{Option: "Endpoint", Value: opt.Model.URL, Invalid: true, Err: err}
	}
	pf, err := createPlot(opt.Plot, rows)
	if err != nil {
		return nil, err
	}
	if pf != nil {
		defer pf.Abort()
	}
	af, err := output.Create(opt.Out)
	if err != nil {
		return nil, &OptionError{Option: "Out", Value: opt.Out, Err: err}
	}
	defer af.Abort()
	opt.Run.Client = client
	rep := &FilesReport{Endpoint: client.Endpoint(), Model: opt.Model.Model, Results: opt.Out, Plot: opt.Plot,
		Concurrency: opt.Model.Concurrency, Rows: len(rows)}
	results, err := runLimited(ctx, rows, opt, rep)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range results {
		if r == nil {
			continue
		}
		rep.Done++
		if r.Error != "" {
			rep.Failed++
			if len(rep.FirstErrors) < 3 {
				rep.FirstErrors = append(rep.FirstErrors, fmt.Sprintf("%s (%s): %s", r.RequestID, r.DataSource, r.Error))
			}
		}
		if err := enc.Encode(r); err != nil {
			return nil, &OptionError{Option: "Out", Value: opt.Out, Err: err}
		}
	}
	if _, err := af.Write(buf.Bytes()); err != nil {
		return nil, &OptionError{Option: "Out", Value: opt.Out, Err: err}
	}
	if err := output.Commit(ctx, "", nil, af); err != nil {
		return nil, &OptionError{Option: "Out", Value: opt.Out, Err: err}
	}
	rep.Total = len(results)
	rep.Report = Summarize(results, opt.Report)
	rep.Requests = client.Stats()
	if pf != nil {
		if err := writePlot(ctx, pf, rep); err != nil {
			return nil, &OptionError{Option: "Plot", Value: opt.Plot, Err: err}
		}
	}
	return rep, nil
}

// writePlot draws the report's curves into pf and commits it. When no
// token-budget result was scored (every one failed) there is nothing to
// draw: the file is not written, and the report says so in a note rather
// than hiding the failures behind an error of the plot.
func writePlot(ctx context.Context, pf *output.File, rep *FilesReport) error {
	err := rep.WritePlot(pf)
	if errors.Is(err, errNoCurve) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s not written: %v", rep.Plot, err))
		rep.Plot = ""
		return nil
	}
	if err != nil {
		return err
	}
	return output.Commit(ctx, "", nil, pf)
}

// createPlot starts the plot file, before anything is asked, so that a
// plot that cannot be drawn or written fails the run up front: nil for no
// plot.
func createPlot(path string, rows []Row) (*output.File, error) {
	if path == "" {
		return nil, nil
	}
	if !strings.EqualFold(filepath.Ext(path), ".png") {
		return nil, &OptionError{Option: "Plot", Value: path, Invalid: true, Err: errors.New("want a .png file")}
	}
	if !slices.ContainsFunc(rows, func(r Row) bool { return sourceFor(r.DataSource).curve != "" }) {
		return nil, &OptionError{Option: "Plot", Value: path, Invalid: true, Err: errors.New("no rows of a token-budget data source (" + strings.Join(curveSources(), ", ") + ") to plot")}
	}
	pf, err := output.Create(path)
	if err != nil {
		return nil, &OptionError{Option: "Plot", Value: path, Err: err}
	}
	return pf, nil
}

// curveSources names the data sources whose reports have a curve.
func curveSources() []string {
	var names []string
	for name, s := range sources {
		if s.curve != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// runLimited runs the rows with RunLimited, recording how it stopped in
// rep.
func runLimited(ctx context.Context, rows []Row, opt FilesOptions, rep *FilesReport) ([]*Result, error) {
	results, how, err := RunLimited(ctx, rows, opt.Run, opt.MaxErrors, opt.Progress)
	rep.GaveUp, rep.Interrupted = how.GaveUp, how.Interrupted
	return results, err
}

// Stopped is how a RunLimited run ended early, if it did.
type Stopped struct {
	// GaveUp: more than the tolerated results failed.
	GaveUp bool
	// Interrupted: the caller's ctx was cancelled.
	Interrupted bool
}

// RunLimited runs the rows (Run), stopping at once when more than
// maxErrors results fail, so that an endpoint that is down or refuses
// every request is not asked for hours. An interrupted run (ctx
// cancelled) returns what finished. progress, when set, is called after
// each finished result, one call at a time, with the number of results the
// run makes; opt.Done is replaced.
func RunLimited(ctx context.Context, rows []Row, opt Options, maxErrors int, progress func(total int)) ([]*Result, Stopped, error) {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	total := len(rows) * max(opt.Samples, 1)
	var (
		mu       sync.Mutex
		failures int
		how      Stopped
	)
	opt.Done = func(r *Result) {
		mu.Lock()
		defer mu.Unlock()
		if progress != nil {
			progress(total)
		}
		if r.Error != "" {
			if failures++; failures > maxErrors && !how.GaveUp {
				how.GaveUp = true
				stop()
			}
		}
	}
	results, err := Run(rctx, rows, opt)
	if err != nil && rctx.Err() == nil {
		return nil, how, err
	}
	how.Interrupted = ctx.Err() != nil
	return results, how, nil
}
