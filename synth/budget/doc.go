// Package budget makes time-budgeted prompts for agents that must answer
// within a time limit, after "Timely Machine: Awareness of Time Makes
// Test-Time Scaling Agentic": VeRL RL rows for the tool agent loop with the
// get_duration timer (data sources timely/general, timely/game and
// timely/ml), OpenAI batch requests that distil a teacher on them, and
// multi-turn SFT rows from the teacher traces the rewards verify as correct
// and on time. Budgets may also be in tokens of the response ([UnitTokens]):
// single-turn rows for the length rewards (data sources length/lcpo_exact,
// length/lcpo_max, length/thinkprune and length/elastic) whose prompt states
// a token budget drawn from a set or a range ([BuildTokens], [WriteTokens],
// [TokenSchema]).
//
// A task's budget is a multiplier of its baseline duration; tasks are read
// from JSONL ([TaskReader]); rows come from [Build] through a [Generator]
// and are written with a [RecordBuilder] in [Schema].
//
// The pipelines of "timeaware synth budget", "synth sft" and "synth
// distill" are [Write] (rows and teacher requests, split or not, committed
// with their manifest), [WriteSFT] (the verified traces as SFT rows) and
// [Distill] (the traces of a teacher's live conversations, which a
// [Teacher] function holds). A file that fails is named by a [FileError].
package budget
