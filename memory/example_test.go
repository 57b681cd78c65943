//go:build sqlite_fts5

package memory_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"jarvis/memory"
)

func Example() {
	root, _ := os.MkdirTemp("", "memory-example-")
	defer os.RemoveAll(root)
	ctx := context.Background()
	s, err := memory.Open(ctx, memory.Options{
		Root: root, // notes go to root/memory/
		Now:  func() time.Time { return time.Date(2026, 2, 11, 9, 0, 0, 0, time.Local) },
	})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	path, _ := s.Write(ctx, "daily", "Dentist appointment moved to Friday 3pm.")
	fmt.Println(path)

	results, _ := s.Search(ctx, "dentist friday", "", 5)
	for _, r := range results {
		fmt.Printf("%s:%d-%d %q\n", r.Path, r.LineStart, r.LineEnd, r.Excerpt)
	}
	lines, _ := s.Get(ctx, path, 3, 3)
	fmt.Println(lines.Text)
	// Output:
	// memory/2026-02-11.md
	// memory/2026-02-11.md:1-3 "# 2026-02-11\n\nDentist appointment moved to Friday 3pm."
	// Dentist appointment moved to Friday 3pm.
}
