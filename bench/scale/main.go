// Command scale measures Jarvis at the size of years of use: the disk a
// database of many messages takes, per table, against its text.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"jarvis/service/store"
)

func main() {
	sessions := flag.Int("sessions", 2000, "conversations")
	turns := flag.Int("turns", 25, "turns per conversation")
	flag.Parse()
	if err := run(*sessions, *turns); err != nil {
		log.Fatal(err)
	}
}

func run(sessions, turns int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "jarvis-scale-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "jarvis.db")
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
	fmt.Printf("filled %d messages in %d conversations through the store in %s\n", f.Messages, sessions, time.Since(t0).Round(time.Millisecond))
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
	fmt.Printf("text %d bytes; jarvis.db %d bytes = %.2f x text, %.0f bytes a message (vacuumed copy %d)\n",
		f.TextBytes, size, float64(size)/float64(f.TextBytes), float64(size)/float64(f.Messages), whole)
	for _, s := range shares {
		fmt.Printf("  %-24s %10d bytes %5.1f%%  %.2f x text\n", s.Table, s.Bytes, 100*float64(s.Bytes)/float64(whole), float64(s.Bytes)/float64(f.TextBytes))
	}
	return nil
}
