package measure

import (
	"os"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var out []time.Duration
		for _, x := range n {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	s := ms(5, 1, 4, 2, 3, 10, 9, 8, 7, 6)
	for _, c := range []struct {
		p    float64
		want int
	}{{50, 5}, {90, 9}, {99, 10}, {100, 10}, {0, 1}, {10, 1}} {
		if got := Percentile(s, c.p); got != time.Duration(c.want)*time.Millisecond {
			t.Errorf("p%v = %v, want %dms", c.p, got, c.want)
		}
	}
	if Percentile(nil, 50) != 0 || Median(ms(7)) != 7*time.Millisecond {
		t.Fatal("edge cases")
	}
	if s[0] != 5*time.Millisecond {
		t.Fatal("Percentile sorted its input in place")
	}
}

func TestProcReadings(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	if RSSKB(os.Getpid()) <= 0 {
		t.Fatal("RSS of this process is 0")
	}
	for i := 0; CPU(os.Getpid()) == 0 && i < 1e8; i++ { // burn a little CPU until it shows
	}
	if CPU(os.Getpid()) <= 0 {
		t.Fatal("CPU of this process is 0")
	}
}
