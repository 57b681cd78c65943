package audit

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenCompletesRowFromAnchor: the log one row short of its anchor (a
// crash after the anchor, before the row's commit was durable) is
// completed from the anchor's copy of the row when it is opened: it
// verifies, takes appends, and the row is the one Append returned. Before
// the anchor carried the row, this log refused every append as tampered.
func TestOpenCompletesRowFromAnchor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	l := open(t, path)
	rows := seed(t, l, 3)
	l.Close()
	db := raw(t, path)
	for _, q := range []string{`DROP TRIGGER audit_log_no_delete`, `DELETE FROM audit_log WHERE id = 3`, `UPDATE sqlite_sequence SET seq = 2 WHERE name = 'audit_log'`,
		`CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	l = open(t, path)
	if err := l.Check(); err != nil {
		t.Fatalf("the log one row short of its anchor refuses appends: %v", err)
	}
	got, err := l.List(context.Background(), Filter{})
	if err != nil || len(got) != 3 || got[2].Hash != rows[2].Hash || got[2].Result != rows[2].Result {
		t.Fatalf("after open: %+v %v", got, err)
	}
	seed(t, l, 1)
	if rep, err := l.Verify(context.Background()); err != nil || !rep.OK || rep.Rows != 4 {
		t.Fatalf("verify: %+v %v", rep, err)
	}

	// Two rows short: not a crash (the anchor held one row), reported.
	l.Close()
	db = raw(t, path)
	for _, q := range []string{`DROP TRIGGER audit_log_no_delete`, `DELETE FROM audit_log WHERE id >= 3`, `UPDATE sqlite_sequence SET seq = 2 WHERE name = 'audit_log'`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	l = open(t, path)
	if err := l.Check(); err == nil || !strings.Contains(err.Error(), "rows 3 to 4 were removed") {
		t.Fatalf("two rows cut off: %v", err)
	}
}

// TestHelperAppender is the process TestAppendSurvivesSIGKILL kills: it
// appends rows until killed, printing each id once Append has returned.
func TestHelperAppender(t *testing.T) {
	path := os.Getenv("AUDIT_HELPER_LOG")
	if path == "" {
		t.Skip("helper process of TestAppendSurvivesSIGKILL")
	}
	l, err := Open(path, Options{KeyDir: path + ".keys"})
	if err != nil {
		fmt.Println("error", err)
		return
	}
	for i := 0; ; i++ {
		e := entry("run_command", Allowed, ByPolicy)
		e.Result = strings.Repeat("r", i*997%6000) // anchors of one page (overwritten) and larger (replaced)
		got, err := l.Append(context.Background(), e)
		if err != nil {
			fmt.Println("error", err)
			return
		}
		fmt.Println("appended", got.ID)
	}
}

// TestAppendSurvivesSIGKILL kills a process that appends rows at random
// points, again and again: after each kill the log opens without a
// tamper report, verifies, and holds every row whose Append had returned.
// Before the anchor carried its row, a kill between the anchor and the
// commit left a log that refused every append from then on.
func TestAppendSurvivesSIGKILL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	var acked int64
	for round := range 20 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperAppender$")
		cmd.Env = append(os.Environ(), "AUDIT_HELPER_LOG="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		want := 5 + rand.IntN(30)
		lines := make(chan string)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		n := 0
		timeout := time.After(60 * time.Second)
		for n < want {
			select {
			case line, ok := <-lines:
				if !ok || !strings.HasPrefix(line, "appended ") {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("round %d: the appender stopped: %q", round, line)
				}
				id, _ := strconv.ParseInt(strings.TrimPrefix(line, "appended "), 10, 64)
				acked = max(acked, id)
				n++
			case <-timeout:
				cmd.Process.Kill()
				t.Fatalf("round %d: only %d rows appended", round, n)
			}
		}
		time.Sleep(time.Duration(rand.IntN(1500)) * time.Microsecond) // a kill point anywhere in an append
		cmd.Process.Signal(syscall.SIGKILL)
		for line := range lines { // acknowledged before the kill landed
			if id, err := strconv.ParseInt(strings.TrimPrefix(line, "appended "), 10, 64); err == nil {
				acked = max(acked, id)
			}
		}
		cmd.Wait()

		l, err := Open(path, Options{KeyDir: path + ".keys"})
		if err != nil {
			t.Fatalf("round %d: open: %v", round, err)
		}
		if err := l.Check(); err != nil {
			l.Close()
			t.Fatalf("round %d: after the kill the log refuses appends: %v", round, err)
		}
		rep, err := l.Verify(context.Background())
		l.Close()
		if err != nil || !rep.OK || int64(rep.Rows) < acked {
			t.Fatalf("round %d: %+v %v; %d rows were acknowledged", round, rep, err, acked)
		}
	}
}

// TestVerifyWhileAppending: another Log on the same file (a second
// process: jarvis-audit verify beside the desktop) verifies while rows are
// appended: the anchor, overwritten in place, is never read half written.
func TestVerifyWhileAppending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	a := open(t, path)
	b := open(t, path)
	done := make(chan error, 1)
	go func() {
		for i := range 300 {
			e := entry("notify", Allowed, ByPolicy)
			e.Result = strings.Repeat("x", i*37%3000)
			if _, err := a.Append(context.Background(), e); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for checks := 0; ; checks++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d verifications during the appends", checks)
			return
		default:
		}
		rep, err := b.Verify(context.Background())
		if err != nil || !rep.OK {
			t.Fatalf("verify during appends: %+v %v", rep, err)
		}
	}
}
