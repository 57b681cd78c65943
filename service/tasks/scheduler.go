package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"jarvis/api"
	"jarvis/service/store"
	"jarvis/service/turn"
)

// RunFunc runs one claimed occurrence of a task to its end (the service: its
// own session and turn, then the run's outcome as an Inbox item).
type RunFunc func(ctx context.Context, t api.Task, run store.RunRow)

// Options configures a Scheduler.
type Options struct {
	Store *store.Store
	Now   func() time.Time // default time.Now
	// Owner names this process in the runs it claims.
	Owner string
	Run   RunFunc
	Log   *slog.Logger
	// Every is the longest wait between two looks at the clock (default
	// 30 s): a machine waking from sleep is caught up within it, whatever
	// the timers that slept with it say.
	Every time.Duration
}

// Scheduler claims the due occurrences of every task and starts their runs.
type Scheduler struct {
	o    Options
	poke chan struct{}
	wg   sync.WaitGroup
}

// NewScheduler returns a scheduler; Loop runs it, Tick looks once.
func NewScheduler(o Options) *Scheduler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Every <= 0 {
		o.Every = 30 * time.Second
	}
	return &Scheduler{o: o, poke: make(chan struct{}, 1)}
}

// Poke makes the loop look again now (a task was added or changed).
func (s *Scheduler) Poke() {
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// Wait waits for the runs started so far.
func (s *Scheduler) Wait() { s.wg.Wait() }

// Go runs f, a run going on outside the schedule (resumed after a
// restart), as one of the scheduler's runs: Wait waits for it too.
func (s *Scheduler) Go(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// Loop looks at the clock until ctx ends: at the next occurrence due, at
// most Every apart, and when poked.
func (s *Scheduler) Loop(ctx context.Context) {
	for {
		next, err := s.Tick(ctx)
		if err != nil && ctx.Err() == nil {
			s.o.Log.Warn("tasks: could not look at the tasks", "err", err)
		}
		wait := s.o.Every
		if !next.IsZero() {
			if d := next.Sub(s.o.Now()); d < wait {
				wait = max(d, 10*time.Millisecond)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.poke:
		case <-t.C:
		}
		t.Stop()
	}
}

// Tick claims every occurrence due now (one per task at most: a stretch of
// missed ones is one run, or none with "skip") and starts the runs; it
// returns the earliest next occurrence of any task.
func (s *Scheduler) Tick(ctx context.Context) (time.Time, error) {
	// Approvals left by a stopped process expire at their deadline here.
	if n, err := s.o.Store.ExpireApprovals(ctx); err != nil {
		s.o.Log.Warn("tasks: expiring approvals", "err", err)
	} else if n > 0 {
		s.o.Log.Info("tasks: approvals expired at their deadline", "count", n)
	}
	rows, err := s.o.Store.Tasks(ctx)
	if err != nil {
		return time.Time{}, err
	}
	now := s.o.Now()
	var next time.Time
	var errs []error
	for _, row := range rows {
		var t api.Task
		if err := json.Unmarshal([]byte(row.Spec), &t); err != nil {
			errs = append(errs, err)
			continue
		}
		t.ID = row.ID
		if t.Disabled {
			continue
		}
		sched, err := Parse(t.Schedule, t.TimeZone)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		settled, err := time.Parse(time.RFC3339Nano, row.SettledUntil)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p := Due(sched, settled, now, t.CatchUp)
		if !p.Occurrence.IsZero() {
			s.claim(ctx, t, p)
			settled = p.Occurrence
		}
		if n := sched.Next(settled); !n.IsZero() && (next.IsZero() || n.Before(next)) {
			next = n
		}
	}
	return next, errors.Join(errs...)
}

// RunNow runs t at once ("Run now"), whatever its schedule says, and
// returns the run it recorded; the schedule's own occurrences are not
// touched. A paused task runs too: asking is the user's decision.
func (s *Scheduler) RunNow(ctx context.Context, t api.Task) (store.RunRow, error) {
	run := store.RunRow{ID: turn.NewID("run_"), TaskID: t.ID, Occurrence: store.Timestamp(s.o.Now()), Status: "running", Owner: s.o.Owner,
		Summary: "run by hand"}
	if err := s.o.Store.AddRun(ctx, run); err != nil {
		return run, err
	}
	s.o.Log.Info("tasks: run by hand", "task", t.ID, "run", run.ID)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.o.Run(context.WithoutCancel(ctx), t, run)
	}()
	return run, nil
}

// claim claims p's occurrence of t and starts its run when p says to run
// it; an occurrence another process claimed first is left to it.
func (s *Scheduler) claim(ctx context.Context, t api.Task, p Plan) {
	run := store.RunRow{ID: turn.NewID("run_"), TaskID: t.ID, Occurrence: store.Timestamp(p.Occurrence), Status: "running",
		CaughtUp: p.Missed && p.Run, Owner: s.o.Owner}
	if !p.Run {
		run.Status, run.Summary = "skipped", "missed while Jarvis was not running or the computer slept; this task skips missed runs"
	}
	if err := s.o.Store.ClaimRun(ctx, run); err != nil {
		if !errors.Is(err, store.ErrConflict) {
			s.o.Log.Warn("tasks: could not claim a run", "task", t.ID, "err", err)
		}
		return
	}
	s.o.Log.Info("tasks: occurrence claimed", "task", t.ID, "occurrence", run.Occurrence, "run", p.Run, "missed", p.Missed, "passed", p.Passed)
	if !p.Run {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.o.Run(context.WithoutCancel(ctx), t, run)
	}()
}
