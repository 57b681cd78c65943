package tasks_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/service/store"
	"jarvis/service/tasks"
)

// TestTwoSchedulersNeverRunTheSameOccurrence: two schedulers, each on its
// own connection to one database file (as two processes would be), look at
// the same moments at once, many times: every occurrence runs exactly once.
func TestTwoSchedulersNeverRunTheSameOccurrence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jarvis.db")
	var mu sync.Mutex
	now := time.Date(2026, 6, 1, 10, 0, 30, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	ran := map[string][]string{} // occurrence → owners
	var scheds []*tasks.Scheduler
	for _, owner := range []string{"a", "b"} {
		st, err := store.Open(context.Background(), path, store.Options{Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		scheds = append(scheds, tasks.NewScheduler(tasks.Options{Store: st, Now: clock, Owner: owner,
			Run: func(_ context.Context, _ api.Task, run store.RunRow) {
				mu.Lock()
				ran[run.Occurrence] = append(ran[run.Occurrence], owner)
				mu.Unlock()
			}}))
		if owner == "a" {
			spec, _ := json.Marshal(api.Task{Name: "t", Prompt: "p", Schedule: "every minute", TimeZone: "UTC", CatchUp: "once"})
			if err := st.PutTask(context.Background(), store.TaskRow{ID: "task_1", Name: "t", Spec: string(spec), Source: "api"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for m := 1; m <= 20; m++ {
		mu.Lock()
		now = time.Date(2026, 6, 1, 10, m, 2, 0, time.UTC)
		mu.Unlock()
		var wg sync.WaitGroup
		for i := 0; i < 6; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := scheds[i%2].Tick(context.Background()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
	}
	for _, s := range scheds {
		s.Wait()
	}
	if len(ran) != 20 {
		t.Fatalf("%d occurrences ran, want 20: %v", len(ran), ran)
	}
	for occ, owners := range ran {
		if len(owners) != 1 {
			t.Fatalf("occurrence %s ran %d times (%v)", occ, len(owners), owners)
		}
	}
}
