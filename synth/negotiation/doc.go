// Package negotiation makes RL prompts for bilateral multi-issue
// negotiations under a deadline, after "Real-Time Deadlines Reveal Temporal
// Awareness Failures in LLM Strategic Dialogues": each row puts the model in
// one role of a scenario (the built-in New Recruit case, or scenarios read
// with [LoadScenarios]) under a time condition (control, time_aware,
// urgency, turn_limit), and the negotiation reward scores the transcript.
// [Build] makes the rows; [Write] writes them with their manifest, split by
// scenario or not; [Config] reads the options as a config file writes them.
package negotiation
