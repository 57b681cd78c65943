package tasks

import (
	"testing"
	"time"
)

func mustLoc(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no tzdata for %s: %v", name, err)
	}
	return l
}

// TestDaylightSavingTransitions walks schedules across the clocks' changes
// in Berlin and New York: every occurrence in a window, as instants.
func TestDaylightSavingTransitions(t *testing.T) {
	cases := []struct {
		name, tz, schedule string
		from, to           string   // local wall-clock, in tz
		want               []string // RFC 3339 with offset
	}{
		{"a daily time the clocks skip runs when they resume, once", "Europe/Berlin", "daily at 2:30",
			"2026-03-28 12:00", "2026-03-30 12:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"a daily time the clocks repeat runs once", "Europe/Berlin", "daily at 2:30",
			"2026-10-24 12:00", "2026-10-26 12:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"the day before and after keep their wall-clock time", "America/New_York", "every weekday at 8:00",
			"2026-03-06 09:00", "2026-03-10 09:00",
			[]string{"2026-03-09T08:00:00-04:00", "2026-03-10T08:00:00-04:00"}},
		{"hourly in the short night: each real hour", "Europe/Berlin", "hourly",
			"2026-03-29 00:30", "2026-03-29 04:30",
			[]string{"2026-03-29T01:00:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-29T04:00:00+02:00"}},
		{"hourly in the long night: each real hour, the repeated one too", "Europe/Berlin", "hourly",
			"2026-10-25 01:30", "2026-10-25 03:30",
			[]string{"2026-10-25T02:00:00+02:00", "2026-10-25T02:00:00+01:00", "2026-10-25T03:00:00+01:00"}},
		{"New York's repeated 1:30 runs once", "America/New_York", "30 1 * * *",
			"2026-10-31 12:00", "2026-11-02 12:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"New York's skipped 2:15 runs at 3:00", "America/New_York", "15 2 * * 0",
			"2026-03-07 12:00", "2026-03-16 12:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-15T02:15:00-04:00"}},
		{"every Monday across the change", "Europe/Berlin", "every Monday",
			"2026-03-22 00:00", "2026-04-07 00:00",
			[]string{"2026-03-23T09:00:00+01:00", "2026-03-30T09:00:00+02:00", "2026-04-06T09:00:00+02:00"}},
		{"a one-off in the skipped hour is a fixed instant", "Europe/Berlin", "at 2026-03-29 02:30",
			"2026-03-28 00:00", "2026-03-30 00:00",
			[]string{"2026-03-29T03:30:00+02:00"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			loc := mustLoc(t, c.tz)
			s, err := Parse(c.schedule, c.tz)
			if err != nil {
				t.Fatal(err)
			}
			from, _ := time.ParseInLocation("2006-01-02 15:04", c.from, loc)
			to, _ := time.ParseInLocation("2006-01-02 15:04", c.to, loc)
			var got []string
			for n := s.Next(from); !n.IsZero() && !n.After(to); n = s.Next(n) {
				got = append(got, n.In(loc).Format(time.RFC3339))
				if len(got) > 50 {
					break
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("%s: occurrences %v, want %v", c.schedule, got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("%s: occurrences %v, want %v", c.schedule, got, c.want)
				}
			}
		})
	}
}

func TestParseRefusesInPlainWords(t *testing.T) {
	for _, c := range []struct{ text, tz, want string }{
		{"", "", "the schedule is empty"},
		{"every weekday", "", "say at what time"},
		{"daily at 25:00", "", "is not a time of day"},
		{"sometimes", "", "neither a known schedule"},
		{"@every 5m", "", "not an interval"},
		{"hourly", "Mars/Olympus", "unknown time zone"},
	} {
		_, err := Parse(c.text, c.tz)
		if err == nil || !contains(err.Error(), c.want) {
			t.Errorf("Parse(%q, %q) = %v, want an error saying %q", c.text, c.tz, err, c.want)
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s == sub || indexOf(s, sub) >= 0))
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// TestMissedOccurrencesNeverBurst: after a night asleep an every-minute task
// is due once, for the newest occurrence; with "skip" it is not run at all.
func TestMissedOccurrencesNeverBurst(t *testing.T) {
	s, err := Parse("every minute", "UTC")
	if err != nil {
		t.Fatal(err)
	}
	done := time.Date(2026, 1, 5, 22, 0, 0, 0, time.UTC)
	wake := done.Add(9*time.Hour + 30*time.Second)
	p := Due(s, done, wake, CatchUpOnce)
	if !p.Run || p.Passed != 540 || !p.Occurrence.Equal(done.Add(9*time.Hour)) {
		t.Fatalf("every minute: %+v; want one run for 07:00 standing for 540 occurrences", p)
	}
	h, _ := Parse("hourly", "UTC")
	if q := Due(h, done, done.Add(9*time.Hour+30*time.Minute), CatchUpOnce); !q.Run || !q.Missed || q.Passed != 9 || q.Occurrence.Hour() != 7 {
		t.Fatalf("hourly after a night away: %+v; want one missed run for 07:00 standing for 9", q)
	}
	if p2 := Due(s, p.Occurrence, wake, CatchUpOnce); !p2.Occurrence.IsZero() {
		t.Fatalf("after settling the newest, %+v is still due", p2)
	}
	// 30 s late is on time: it runs even with skip.
	if q := Due(s, done.Add(8*time.Hour+59*time.Minute), wake, CatchUpSkip); !q.Run || q.Missed {
		t.Fatalf("on time with skip: %+v", q)
	}
	// An hourly task five minutes past its third missed hour, with skip: settled, not run.
	if q := Due(h, done, done.Add(3*time.Hour+5*time.Minute), CatchUpSkip); q.Run || !q.Missed {
		t.Fatalf("missed with skip: %+v", q)
	}
	// A one-off that passed while away runs once with "once".
	o, _ := Parse("at 2026-01-06 03:00", "UTC")
	if q := Due(o, done, wake, CatchUpOnce); !q.Run || !q.Missed || q.Passed != 1 {
		t.Fatalf("one-off missed: %+v", q)
	}
	if q := Due(o, time.Date(2026, 1, 6, 3, 0, 0, 0, time.UTC), wake, CatchUpOnce); !q.Occurrence.IsZero() {
		t.Fatalf("a one-off that ran is due again: %+v", q)
	}
}
