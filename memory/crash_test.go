//go:build sqlite_fts5

package memory

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const crashHelperEnv = "JARVIS_MEMORY_CRASH_HELPER"

// crashEntry is the deterministic content of write id, so the parent can
// tell a complete entry from a torn one. Every fifth entry is ~50 KiB, big
// enough that a kill can land inside its write(2).
func crashEntry(id string, n int) string {
	words := 300
	if n%5 == 0 {
		words = 3500
	}
	var b strings.Builder
	fmt.Fprintf(&b, "begin %s\n", id)
	for i := 0; i < words; i++ {
		b.WriteString(id)
		if i == words-1 {
			break
		}
		if i%10 == 9 {
			b.WriteByte('\n')
		} else {
			b.WriteByte(' ')
		}
	}
	fmt.Fprintf(&b, "\nend %s", id)
	return b.String()
}

// runCrashHelper is the child process: it writes to both files from two
// goroutines as fast as it can and prints "ack ID" after each Write returns,
// until the parent kills it.
func runCrashHelper(root, round string) {
	s, err := Open(context.Background(), Options{Root: root, Now: func() time.Time { return fixedNow }})
	if err != nil {
		fmt.Println("open error:", err)
		os.Exit(3)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, target := range []string{TargetLongTerm, TargetDaily} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 400; n++ {
				id := fmt.Sprintf("%s-%s-%d", round, target, n)
				if _, err := s.Write(context.Background(), target, crashEntry(id, n)); err != nil {
					fmt.Println("write error:", err)
					os.Exit(4)
				}
				mu.Lock()
				os.Stdout.WriteString("ack " + id + " " + fmt.Sprint(n) + "\n")
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	time.Sleep(time.Minute) // wait to be killed
	os.Exit(0)
}

// TestCrashDuringWrites SIGKILLs a process in the middle of a burst of
// writes, several times on the same workspace, and checks that every
// acknowledged write is in its file, that no file holds a torn entry, and
// that the store reopens cleanly and finds the last entries.
func TestCrashDuringWrites(t *testing.T) {
	if root := os.Getenv(crashHelperEnv); root != "" {
		runCrashHelper(root, os.Getenv(crashHelperEnv+"_ROUND"))
		return
	}
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	root := t.TempDir()
	acked := map[string]int{} // id -> n
	for round := 0; round < 6; round++ {
		r := fmt.Sprintf("r%d", round)
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashDuringWrites$", "-test.v")
		cmd.Env = append(os.Environ(), crashHelperEnv+"="+root, crashHelperEnv+"_ROUND="+r)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 5 + rand.IntN(30)
		sc := bufio.NewScanner(out)
		acks, killed := 0, false
		for sc.Scan() {
			line := sc.Text()
			var id string
			var n int
			if _, err := fmt.Sscanf(line, "ack %s %d", &id, &n); err != nil {
				if strings.HasPrefix(line, "open error") || strings.HasPrefix(line, "write error") {
					t.Fatalf("helper: %s", line)
				}
				continue // test framework chatter
			}
			acked[id] = n
			acks++
			if acks == killAfter && !killed {
				cmd.Process.Kill() // SIGKILL
				killed = true
			}
		}
		cmd.Wait()
		if !killed {
			t.Fatalf("round %d: helper exited after %d acks before being killed", round, acks)
		}
		verifyCrashFiles(t, root, acked)
	}

	s := openStore(t, root, func(o *Options) { o.DisableWatcher = true })
	if m, _ := filepath.Glob(filepath.Join(root, "memory", ".*.tmp-*")); len(m) != 0 {
		t.Errorf("stale temp files left after reopen: %v", m)
	}
	for id := range acked {
		if strings.HasSuffix(id, "-0") && strings.HasPrefix(id, "r5-") {
			if res := search(t, s, id, ""); len(res) == 0 {
				t.Errorf("acknowledged entry %s not searchable after reopen", id)
			}
		}
	}
	if _, err := s.Write(context.Background(), "daily", "after the crashes"); err != nil {
		t.Fatal(err)
	}
}

func verifyCrashFiles(t *testing.T, root string, acked map[string]int) {
	t.Helper()
	found := map[string]bool{}
	for _, name := range []string{"MEMORY.md", "2026-02-11.md"} {
		data, err := os.ReadFile(filepath.Join(root, "memory", name))
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		if !strings.HasSuffix(s, "\n") {
			t.Fatalf("%s: does not end with a line break (torn?)", name)
		}
		parts := strings.Split(strings.TrimSuffix(s, "\n"), "\n\n")
		for i, p := range parts {
			if i == 0 && strings.HasPrefix(p, "# ") {
				continue
			}
			var id string
			if _, err := fmt.Sscanf(p, "begin %s", &id); err != nil {
				t.Fatalf("%s: entry %d is not a whole entry: %.80q", name, i, p)
			}
			// id is ROUND-TARGET-N.
			var target string
			var n int
			if k := strings.LastIndexByte(id, '-'); k > 0 {
				fmt.Sscan(id[k+1:], &n)
				target = id[strings.IndexByte(id, '-')+1 : k]
			}
			if p != crashEntry(id, n) {
				t.Fatalf("%s: entry %s is torn (%d bytes)", name, id, len(p))
			}
			if (target == TargetLongTerm) != (name == "MEMORY.md") {
				t.Fatalf("%s: entry %s is in the wrong file", name, id)
			}
			if found[id] {
				t.Fatalf("%s: entry %s appears twice", name, id)
			}
			found[id] = true
		}
	}
	for id := range acked {
		if !found[id] {
			t.Fatalf("acknowledged write %s is missing", id)
		}
	}
}
