// Package budget makes time-budgeted prompts for agents that must answer
// within a time limit, after "Timely Machine: Awareness of Time Makes
// Test-Time Scaling Agentic": VeRL RL rows for the tool agent loop with the
// get_duration timer (data sources timely/general, timely/game and
// timely/ml), OpenAI batch requests that distil a teacher on them, and
// multi-turn SFT rows from the teacher traces the rewards verify as correct
// and on time.
//
// A task's budget is a multiplier of its baseline duration; tasks are read
// from JSONL ([TaskReader]); rows come from [Build] through a [Generator]
// and are written with a [RecordBuilder] in [Schema].
package budget
