// Package timestamps gives multi-turn tool-use trajectories realistic
// message times, with the interaction-time model of "Your LLM Agents are
// Temporally Blind": reading, writing and generation paces drawn from
// truncated normal and log-normal distributions ([TruncatedNormal],
// [TruncatedLogNormal]), and the final gap per sensitivity and elapse
// level. A [Stamper] stamps one trajectory; [Stream] stamps streams of
// records, rewriting only their times ([RewriteTimes]); [Write] stamps
// trajectory files into a JSON or JSONL file with its manifest, with the
// model's settings as a config file writes them ([Config]).
package timestamps
