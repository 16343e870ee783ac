package timers

// Settings are a timer's options in the one JSON form every part of the
// toolkit uses: what synth budget writes into a row
// (extra_info.tools_kwargs.get_duration.create_kwargs, extra_info.timer),
// what POST /v1/timers takes, and what eval run starts a live row's timer
// with. Zero values mean the defaults (Spec).
type Settings struct {
	// SpeedFactor is α, the factor on generation time (Spec.SpeedFactor).
	SpeedFactor float64 `json:"speed_factor"`
	// Jitter is the relative noise on the time shown to the model.
	Jitter float64 `json:"jitter"`
	// TimeLimitS is the rollout's budget in seconds, signed into the timer.
	TimeLimitS float64 `json:"time_limit_s"`
	// TTLS is the timer's lifetime in seconds.
	TTLS float64 `json:"ttl_s"`
}
