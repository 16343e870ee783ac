// Package eval measures a model served behind an OpenAI-compatible
// endpoint on timeaware's own datasets: TicToc tool-call decisions from a
// pairs file, and the VeRL rows of every synth output, each scored by its
// data source's reward.
//
// Decision rows send the conversation with its tools; a reply that calls a
// tool is an attempt, and the report gives the normalised alignment rate,
// its two halves and the attempt rates (the TicToc paper's protocol),
// broken down by sensitivity and elapse level. Time Puzzles and TRAVELER
// rows send the prompt and score the reply; negotiation rows play whole
// episodes against the scripted opponent of synth/negotiation, each reply
// charged its generation time on the row's clock. timely/general rows run live: the model may call get_duration, which
// is answered from a real timer (package timers) created with the row's
// speed factor, jitter and budget, whose clock advances by the time each
// model call took; the reward then reads the timer. timely/game and
// timely/ml rows need their task's environment and are skipped, said so.
// Rows of the token-budget rewards (length/lcpo_exact, lcpo_max,
// thinkprune, elastic) send the prompt and give the reward the server's
// token counts (usage.completion_tokens, and the thinking a reasoning
// parser splits out): a reply without them is an error, never a guess. Their
// report adds, per budget, the share within budget and the overshoot's
// mean and 90th percentile, and the accuracy-against-budget curve, as a
// table and, with Report.WritePlot, a PNG. length/anytime rows are
// skipped: they need answers drawn at several cuts of one thinking.
//
// Every metric is reported with a 95% percentile bootstrap interval over
// rows (the samples of one row stay together), seeded, and two runs on the
// same rows are compared with a paired bootstrap. Requests go through
// package chat, whose cache makes a rerun resume: nothing already answered
// is asked again.
//
// The commands' pipelines are here too: RunFiles reads dataset files, runs
// them and writes the results file (eval run), CompareFiles compares two
// results files, NAR reports tool-call decisions, and Score scores JSONL
// items offline with one reward; Report, Comparison and NARReport render
// as text tables. Errors about a path or URL an option names are
// *OptionError values, so that a caller can name the option.
package eval
