// Package tasks owns scheduled and background tasks: what a task is (a
// prompt, an agent, a schedule, a catch-up rule, the tools it may use and how
// long its approvals wait), its schedule (cron expressions and presets, read
// by robfig/cron, with daylight-saving changes made right: a time the clocks
// skip runs when they resume, a time they repeat runs once), which occurrence
// is due and what a missed one becomes (Plan: run once or skip, never a
// burst), the task's tools in words (Words), tasks.json, and the Scheduler
// that claims each due occurrence in the store (exactly one process runs it)
// and hands it to the service, which runs it as its own session.
package tasks

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule says when a task runs.
type Schedule struct {
	spec    *cron.SpecSchedule // nil for a one-off
	once    time.Time          // a one-off's time
	loc     *time.Location
	text    string // as given
	hourly  bool   // fires in every hour of the day: a repeated hour runs again
	Summary string // in words
}

var (
	reAt      = regexp.MustCompile(`^(?:once\s+)?at\s+(\d{4}-\d{2}-\d{2})[ T](\d{1,2}):(\d{2})$`)
	reDaily   = regexp.MustCompile(`^(?:every\s+)?(day|daily|weekday|weekdays|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)(?:\s+at)?(?:\s+(\d{1,2}):(\d{2}))?$`)
	weekdayNo = map[string]int{"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6}
)

// Parse reads a schedule in the time zone tz ("" is the machine's own):
// "hourly", "every minute", "every weekday at 8:00", "every Monday" (9:00),
// "daily at 7:30", "at 2026-12-01 09:00" (a one-off), or a five-field cron
// expression ("0 8 * * 1-5").
func Parse(text, tz string) (Schedule, error) {
	loc := time.Local
	if tz != "" {
		l, err := time.LoadLocation(tz)
		if err != nil {
			return Schedule{}, fmt.Errorf("unknown time zone %q (use a name such as Europe/Berlin)", tz)
		}
		loc = l
	}
	s := Schedule{loc: loc, text: text}
	norm := strings.ToLower(strings.Join(strings.Fields(text), " "))
	expr := ""
	switch {
	case norm == "":
		return Schedule{}, errors.New("the schedule is empty: give a time such as \"every weekday at 8:00\" or a cron expression")
	case norm == "hourly" || norm == "every hour":
		expr, s.Summary = "0 * * * *", "every hour, on the hour"
	case norm == "every minute":
		expr, s.Summary = "* * * * *", "every minute"
	case reAt.MatchString(norm):
		m := reAt.FindStringSubmatch(norm)
		t, err := time.ParseInLocation("2006-01-02 15:04", m[1]+" "+pad2(m[2])+":"+m[3], loc)
		if err != nil {
			return Schedule{}, fmt.Errorf("the time %q is not a valid date and time", text)
		}
		s.once, s.Summary = t, "once, at "+t.Format("Mon 2 Jan 2006 15:04 MST")
		return s, nil
	case reDaily.MatchString(norm):
		m := reDaily.FindStringSubmatch(norm)
		h, mi := 9, 0
		if m[2] != "" {
			h, _ = strconv.Atoi(m[2])
			mi, _ = strconv.Atoi(m[3])
			if h > 23 || mi > 59 {
				return Schedule{}, fmt.Errorf("%s:%s is not a time of day", m[2], m[3])
			}
		} else if m[1] == "day" || m[1] == "daily" || strings.HasPrefix(m[1], "weekday") {
			return Schedule{}, fmt.Errorf("say at what time, e.g. \"%s at 8:00\"", text)
		}
		at := fmt.Sprintf("%d:%02d", h, mi)
		day := strings.TrimSuffix(m[1], "s")
		switch day {
		case "day", "daily":
			expr, s.Summary = fmt.Sprintf("%d %d * * *", mi, h), "every day at "+at
		case "weekday":
			expr, s.Summary = fmt.Sprintf("%d %d * * 1-5", mi, h), "every weekday (Monday to Friday) at "+at
		default:
			expr, s.Summary = fmt.Sprintf("%d %d * * %d", mi, h, weekdayNo[day]), "every "+strings.ToUpper(day[:1])+day[1:]+" at "+at
		}
	default:
		if strings.HasPrefix(strings.TrimSpace(text), "CRON_TZ=") || strings.HasPrefix(strings.TrimSpace(text), "TZ=") {
			return Schedule{}, errors.New("give the time zone as the task's own time zone, not inside the cron expression")
		}
		expr, s.Summary = strings.TrimSpace(text), "cron \""+strings.TrimSpace(text)+"\""
	}
	sched, err := cron.ParseStandard(expr)
	if err != nil {
		return Schedule{}, fmt.Errorf("%q is neither a known schedule (hourly, every weekday at 8:00, every Monday, at 2026-12-01 09:00) nor a cron expression: %v", text, err)
	}
	spec, ok := sched.(*cron.SpecSchedule)
	if !ok { // @every: a fixed interval, not a time of the clock
		return Schedule{}, fmt.Errorf("%q: give times of the clock (a cron expression), not an interval", text)
	}
	spec.Location = loc
	s.spec = spec
	s.hourly = spec.Hour&allHours == allHours
	if loc != time.Local {
		s.Summary += " (" + loc.String() + ")"
	}
	return s, nil
}

const allHours = 1<<24 - 1

func pad2(s string) string {
	if len(s) == 1 {
		return "0" + s
	}
	return s
}

// OneOff reports whether the schedule has a single occurrence.
func (s Schedule) OneOff() bool { return s.spec == nil }

// String is the schedule as given.
func (s Schedule) String() string { return s.text }

// Next returns the first occurrence strictly after t; zero when there is none
// (a one-off that has passed). Daylight-saving changes: a time of day the
// clocks skip (02:30 when they jump from 02:00 to 03:00) runs at the instant
// they resume, once; a time of day they repeat (02:30 when they go back from
// 03:00 to 02:00) runs once, at its first passing, unless the schedule fires
// every hour (then each real hour runs).
func (s Schedule) Next(t time.Time) time.Time {
	if s.spec == nil {
		if s.once.After(t) {
			return s.once
		}
		return time.Time{}
	}
	n := s.spec.Next(t)
	// robfig/cron skips a time in a gap: look for one between t and n.
	if g := s.gapOccurrence(t, n); !g.IsZero() {
		return g
	}
	// robfig/cron runs a repeated wall-clock time twice.
	for !s.hourly && !n.IsZero() && s.repeatsWallClock(n) {
		n = s.spec.Next(n)
		if g := s.gapOccurrence(t, n); !g.IsZero() {
			return g
		}
	}
	return n
}

// repeatsWallClock says whether n's wall-clock time already passed an hour
// or two earlier the same day (the second passing of a repeated hour).
func (s Schedule) repeatsWallClock(n time.Time) bool {
	ln := n.In(s.loc)
	for _, back := range []time.Duration{time.Hour, 2 * time.Hour} { // the repeat is an offset's change, at most 2 h
		p := n.Add(-back).In(s.loc)
		if p.Year() == ln.Year() && p.YearDay() == ln.YearDay() && p.Hour() == ln.Hour() && p.Minute() == ln.Minute() {
			_, off1 := p.Zone()
			_, off2 := ln.Zone()
			if off1 != off2 {
				return true
			}
		}
	}
	return false
}

// gapOccurrence finds a clock jump forward in (t, n] whose skipped wall-clock
// minutes the schedule matches, and returns the instant the clocks resume
// (the first instant after the jump); zero if none.
func (s Schedule) gapOccurrence(t, n time.Time) time.Time {
	end := n
	if end.IsZero() || end.Sub(t) > 400*24*time.Hour {
		end = t.Add(400 * 24 * time.Hour)
	}
	_, off := t.In(s.loc).Zone()
	for h := t.Truncate(time.Hour).Add(time.Hour); !h.After(end.Add(time.Hour)); h = h.Add(time.Hour) {
		_, o := h.In(s.loc).Zone()
		if o == off {
			continue
		}
		if o > off { // the clocks jumped forward by o-off seconds, between h-1h and h
			at := jumpInstant(h.Add(-time.Hour), h, s.loc)
			if at.After(t) && (n.IsZero() || !at.After(n)) {
				// Wall-clock minutes skipped: from the old offset's view of at.
				before := at.Add(-time.Second).In(time.FixedZone("", off)).Truncate(time.Minute)
				for m := time.Duration(0); m < time.Duration(o-off)*time.Second; m += time.Minute {
					w := before.Add(m + time.Minute)
					if s.matchesWall(w) {
						return at
					}
				}
			}
		}
		off = o
	}
	return time.Time{}
}

// jumpInstant finds the first instant in (a, b] whose offset differs from a's.
func jumpInstant(a, b time.Time, loc *time.Location) time.Time {
	_, off := a.In(loc).Zone()
	for b.Sub(a) > time.Second {
		mid := a.Add(b.Sub(a) / 2)
		if _, o := mid.In(loc).Zone(); o == off {
			a = mid
		} else {
			b = mid
		}
	}
	return b
}

// matchesWall says whether the schedule's fields match w's wall-clock fields
// (w is in a fixed zone carrying the wall-clock time).
func (s Schedule) matchesWall(w time.Time) bool {
	sp := s.spec
	bit := func(mask uint64, v int) bool { return mask&(1<<uint(v)) != 0 }
	if !bit(sp.Minute, w.Minute()) || !bit(sp.Hour, w.Hour()) || !bit(sp.Month, int(w.Month())) {
		return false
	}
	const star = 1 << 63 // robfig's starBit
	domStar, dowStar := sp.Dom&star != 0, sp.Dow&star != 0
	dom, dow := bit(sp.Dom, w.Day()), bit(sp.Dow, int(w.Weekday()))
	if domStar || dowStar {
		return dom && dow
	}
	return dom || dow
}
