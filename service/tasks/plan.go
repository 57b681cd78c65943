package tasks

import "time"

// Catch-up rules: what a missed occurrence becomes.
const (
	CatchUpOnce = "once" // run once, for the newest missed occurrence
	CatchUpSkip = "skip" // run nothing until the next occurrence
)

// Grace is how late an occurrence may be found and still count as on time
// (the scheduler looks at least this often); later, it was missed (the
// machine was asleep or Jarvis was not running).
const Grace = 2 * time.Minute

// Plan is what is due for a task at a moment.
type Plan struct {
	// Occurrence is the newest occurrence due (zero: nothing is due).
	Occurrence time.Time
	// Run says whether to run it; false when it was missed and the rule
	// is to skip.
	Run bool
	// Missed: found later than Grace after its time.
	Missed bool
	// Passed is how many occurrences are settled by this plan (the one run
	// or skipped and the older ones it stands for): never a burst.
	Passed int
}

// Due says what is due at now for a schedule whose occurrences up to done
// are settled (run or skipped). Occurrences older than the newest due are
// never run: at most one run comes of any stretch of missed ones.
func Due(s Schedule, done, now time.Time, catchUp string) Plan {
	next := s.Next(done)
	if next.IsZero() || next.After(now) {
		return Plan{}
	}
	p := Plan{Occurrence: next, Passed: 1}
	// The newest occurrence not after now; a bounded walk (an every-minute
	// task after a month away takes 43,200 steps), then a jump.
	for i := 0; i < 200000; i++ {
		n := s.Next(p.Occurrence)
		if n.IsZero() || n.After(now) {
			break
		}
		p.Occurrence = n
		p.Passed++
	}
	p.Missed = now.Sub(p.Occurrence) > Grace
	p.Run = !p.Missed || catchUp != CatchUpSkip
	return p
}
