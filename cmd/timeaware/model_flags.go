package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/timeaware/timeaware/chat"
	"github.com/timeaware/timeaware/eval"
	"github.com/timeaware/timeaware/internal/progress"
	"github.com/timeaware/timeaware/rewards"
	"github.com/timeaware/timeaware/synth/negotiation"
)

// standin is the first lines of the help examples that need a model: where
// one is expected, and how to start the scripted stand-in the repository
// ships.
const standin = `  # a model server at 127.0.0.1:8000 (vLLM, SGLang), or the scripted stand-in that needs no GPU:
  #   python3 examples/eval/standin_model.py --port 8000 &
`

// modelFlags are the flags of the commands that put rows to a model behind
// an OpenAI-compatible endpoint (eval run, synth distill).
type modelFlags struct {
	endpoint, model, cacheDir, apiKeyEnv, toolChoice     string
	concurrency, samples, maxTokens, maxTurns, maxErrors int
	temperature                                          float64
	seed                                                 int64
	timeout                                              time.Duration
	noCache                                              bool
}

func (m *modelFlags) add(fs *pflag.FlagSet, seedHelp string) {
	fs.StringVar(&m.endpoint, "endpoint", "", "OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
	fs.StringVar(&m.model, "model", "", "model name sent with every request")
	fs.IntVar(&m.concurrency, "concurrency", chat.DefaultConcurrency, "requests in flight")
	fs.IntVar(&m.samples, "samples", 1, "replies per row (sample k is sent with seed --seed+k)")
	fs.Float64Var(&m.temperature, "temperature", 0, "sampling temperature")
	fs.Int64Var(&m.seed, "seed", 0, seedHelp)
	fs.StringVar(&m.toolChoice, "tool-choice", "auto", "tool_choice sent with tools: auto (vLLM: --enable-auto-tool-choice --tool-call-parser), none (calls stay in the text), omit")
	fs.IntVar(&m.maxTokens, "max-tokens", 0, "cap on each reply's tokens (0: the server's)")
	fs.IntVar(&m.maxTurns, "max-turns", eval.DefaultMaxTurns, "model calls a live row may make")
	fs.IntVar(&m.maxErrors, "max-errors", 0, "results that may fail (request or scoring) before the run stops and fails")
	fs.StringVar(&m.cacheDir, "cache", "", "reply cache directory (default: --out with .cache appended)")
	fs.BoolVar(&m.noCache, "no-cache", false, "send every request, keep no cache")
	fs.StringVar(&m.apiKeyEnv, "api-key-env", "OPENAI_API_KEY", "environment variable holding the API key (sent when set)")
	fs.DurationVar(&m.timeout, "timeout", chat.DefaultTimeout, "bound on each request attempt")
}

// check validates the flags; out is the command's --out.
func (m *modelFlags) check(out string) error {
	switch {
	case m.endpoint == "":
		return usagef("--endpoint is required (an OpenAI-compatible base URL such as http://127.0.0.1:8000/v1)")
	case m.model == "":
		return usagef("--model is required (the model name the endpoint serves)")
	case m.concurrency <= 0:
		return usagef("--concurrency %d: want at least 1", m.concurrency)
	case m.samples <= 0:
		return usagef("--samples %d: want at least 1", m.samples)
	case !(m.temperature >= 0 && m.temperature <= 100):
		return usagef("--temperature %g: want a number from 0 to 100", m.temperature)
	case m.toolChoice != "auto" && m.toolChoice != "none" && m.toolChoice != "omit":
		return usagef("--tool-choice %s: want auto, none or omit", showValue(m.toolChoice))
	case m.maxTokens < 0:
		return usagef("--max-tokens %d: must not be negative", m.maxTokens)
	case m.maxTurns <= 0:
		return usagef("--max-turns %d: want at least 1", m.maxTurns)
	case m.maxErrors < 0:
		return usagef("--max-errors %d: must not be negative", m.maxErrors)
	case m.timeout <= 0:
		return usagef("--timeout %s: must be positive", m.timeout)
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return usagef("--out %s: is a directory; want the file to write", out)
	}
	return nil
}

// cache is the reply cache directory for --out ("" with --no-cache).
func (m *modelFlags) cache(out string) string {
	switch {
	case m.noCache:
		return ""
	case m.cacheDir != "":
		return m.cacheDir
	}
	return out + ".cache"
}

// client builds the chat client; name prefixes its errors.
func (m *modelFlags) client(name, out string) (*chat.Client, error) {
	c, err := chat.New(chat.Options{
		Name: name, URL: m.endpoint, Model: m.model, APIKey: os.Getenv(m.apiKeyEnv),
		Concurrency: m.concurrency, Timeout: m.timeout, CacheDir: m.cache(out),
	})
	if err != nil {
		return nil, usagef("--endpoint %s: %w", showValue(m.endpoint), sayOnce(m.endpoint, err))
	}
	return c, nil
}

// modelRun is what run did: the results (nil where unfinished), whether it
// stopped on --max-errors, and the error of an interrupted run.
type modelRun struct {
	results []*eval.Result
	gaveUp  bool
	err     error
}

// run puts the rows to the model with progress on a TTY, stopping at once
// when more than --max-errors results fail (eval.RunLimited).
func (m *modelFlags) run(cmd *cobra.Command, a *app, rows []eval.Row, client *chat.Client, cfg rewards.Config, stopAtLimit bool, opponentBeta float64, opponent negotiation.Opponent) (*modelRun, error) {
	prog := progress.New(a.stderr, "results").Of(len(rows) * m.samples)
	results, how, err := eval.RunLimited(cmd.Context(), rows, eval.Options{
		Client: client, Rewards: cfg, Samples: m.samples, Temperature: m.temperature,
		MaxTokens: m.maxTokens, Seed: m.seed, MaxTurns: m.maxTurns, Workers: m.concurrency,
		ToolChoice: m.toolChoice, StopAtLimit: stopAtLimit, OpponentBeta: opponentBeta, Opponent: opponent,
	}, m.maxErrors, func(int) { prog.Add(1) })
	prog.Done()
	if err != nil {
		return nil, err
	}
	out := &modelRun{results: results, gaveUp: how.GaveUp}
	if how.Interrupted {
		out.err = cmd.Context().Err()
	}
	return out, nil
}
