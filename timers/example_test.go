package timers_test

import (
	"fmt"
	"time"

	"github.com/timeaware/timeaware/timers"
)

// A rollout on simulated hardware twice as slow: 3 s of generation count as
// 6, while a 4 s tool call counts as 4. A second store with the same secret
// (another replica, or this one after a restart) reads the same timer.
func Example() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	secret := []byte("shared by every replica, 32 byte")
	a, _ := timers.New(timers.Options{Secret: secret, Now: clock})
	b, _ := timers.New(timers.Options{Secret: secret, Now: clock})

	r, _ := a.Create(timers.Spec{RolloutID: "rollout-1", SpeedFactor: 2})
	now = now.Add(7 * time.Second)
	r, _ = a.AddSpan(r.Timer, timers.Span{Seconds: 4})

	got, _ := b.Read(r.Timer)
	fmt.Println(got.RolloutID, got.Text)
	// Output:
	// rollout-1 10.00 seconds.
}
