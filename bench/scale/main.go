// Command scale measures Jarvis at the size of years of use. It fills a
// data dir with conversations directly through the store (service/store,
// the rows a turn writes, many turns to a transaction: through the API a
// million messages would take hours), plus one conversation of 200
// messages, and reports the disk the database takes, per table, against
// its text; then it runs the real jarvis-service on that data dir (the
// scripted upstream as its model) and times, through HTTP: start to
// listening, a page of the session list, the 200-message transcript,
// conversation search, and the first turn after a start against warm ones.
//
//	go run -tags sqlite_fts5 ./bench/scale                             # 1,000,000 messages (make bench)
//	go run -tags sqlite_fts5 ./bench/scale -sessions 2000 -turns 25    # 100,000
//
// It prints a Markdown section.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"jarvis/internal/measure"
	"jarvis/service/store"
)

func main() {
	sessions := flag.Int("sessions", 10000, "conversations")
	turns := flag.Int("turns", 50, "turns per conversation (two messages each)")
	restarts := flag.Int("restarts", 5, "service starts to time")
	reps := flag.Int("reps", 100, "requests of each kind to time")
	flag.Parse()
	if err := run(*sessions, *turns, *restarts, *reps); err != nil {
		log.Fatal(err)
	}
}

func run(sessions, turns, restarts, reps int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "jarvis-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dataDir := filepath.Join(dir, "data")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(dataDir, "jarvis.db")
	start := time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	st, err := store.Open(ctx, path, store.Options{Now: c.Now})
	if err != nil {
		return err
	}
	t0 := time.Now()
	f, err := fill(ctx, st, c, fillSpec{Sessions: sessions, Turns: turns, TextBytes: 200, Deltas: 6, Start: start, Seed: 1})
	if err != nil {
		st.Close()
		return err
	}
	longf, err := fill(ctx, st, c, fillSpec{Sessions: 1, Turns: 100, TextBytes: 200, Deltas: 6, Start: c.Now(), Seed: 2})
	if err != nil {
		st.Close()
		return err
	}
	f.Messages += longf.Messages
	f.TextBytes += longf.TextBytes
	fmt.Printf("## Scale: %d messages in %d conversations (bench/scale)\n\n", f.Messages, sessions+1)
	fmt.Printf("Filled directly through the store (the rows a turn writes, %d turns to a transaction) in %s, about %d bytes of text a message.\n\n",
		500, time.Since(t0).Round(time.Millisecond), f.TextBytes/int64(f.Messages))
	if err := settle(ctx, st, c); err != nil {
		st.Close()
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	size, err := dbFiles(path)
	if err != nil {
		return err
	}
	whole, shares, err := tableShares(ctx, path)
	if err != nil {
		return err
	}
	fmt.Printf("| disk | today | goal |\n|---|---|---|\n")
	fmt.Printf("| text of the messages | %d bytes | |\n", f.TextBytes)
	fmt.Printf("| jarvis.db after the replay window, compaction and reclaim | %d bytes = %.2f x the text, %.0f bytes a message | <= 3 x %s |\n",
		size, float64(size)/float64(f.TextBytes), float64(size)/float64(f.Messages), measure.Verdict(float64(size) <= 3*float64(f.TextBytes)))
	fmt.Printf("\nEach table's share (its rows, indexes and shadow tables; a vacuumed copy of %d bytes less the copy without it):\n\n", whole)
	fmt.Printf("| table | bytes | share | x text |\n|---|---|---|---|\n")
	for _, s := range shares {
		fmt.Printf("| %s | %d | %.1f%% | %.2f |\n", s.Table, s.Bytes, 100*float64(s.Bytes)/float64(whole), float64(s.Bytes)/float64(f.TextBytes))
	}
	a, err := measureAPI(dir, dataDir, longf.Sessions[0], f.Sessions[0], restarts, reps)
	if err != nil {
		return err
	}
	ms := measure.Ms
	fmt.Printf("\n| figure (p50, through HTTP) | today | goal |\n|---|---|---|\n")
	fmt.Printf("| start to listening (%d starts) | %s | < 1 s %s |\n", restarts, ms(a.Listen), measure.Verdict(a.Listen < time.Second))
	fmt.Printf("| a page of the session list (50) | %s | < 20 ms %s |\n", ms(a.ListPage), measure.Verdict(a.ListPage < 20*time.Millisecond))
	fmt.Printf("| the transcript of %d messages | %s | < 5 ms %s |\n", a.TranscriptLen, ms(a.Transcript), measure.Verdict(a.Transcript < 5*time.Millisecond))
	fmt.Printf("| conversation search, common word (garden) | %s | < 50 ms %s |\n", ms(a.SearchCommon), measure.Verdict(a.SearchCommon < 50*time.Millisecond))
	fmt.Printf("| conversation search, two rarer words | %s | < 50 ms %s |\n", ms(a.SearchRare), measure.Verdict(a.SearchRare < 50*time.Millisecond))
	fmt.Printf("| first turn after a start | %s | |\n", ms(a.FirstTurn))
	fmt.Printf("| a warm turn (baseline, same run) | %s | |\n", ms(a.WarmTurn))
	fmt.Printf("| added by the start | %s | < 20 ms %s |\n", ms(a.FirstTurn-a.WarmTurn), measure.Verdict(a.FirstTurn-a.WarmTurn < 20*time.Millisecond))
	return nil
}
