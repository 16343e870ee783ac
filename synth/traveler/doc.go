// Package traveler makes TRAVELER questions, after "TRAVELER: A Benchmark
// for Evaluating Temporal Reasoning": who did what, where and when, over a
// household's event set, with explicit, implicit and vague time references;
// a vague question's ground truth is the probability, from the human
// survey's curves ([SurveyCurve]), that its adverbial applies at each
// event's age.
package traveler
