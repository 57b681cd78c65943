package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"jarvis/tools"
)

// TestHelperCheckpointedWrite is the process the crash test kills: it
// writes NEW over the file f in the workspace through the executor with a
// checkpoint, printing each step of Guard and, when told to stop at one,
// waiting there to be killed.
func TestHelperCheckpointedWrite(t *testing.T) {
	ws := os.Getenv("CHECKPOINT_HELPER_WS")
	if ws == "" {
		t.Skip("helper process for TestCrashAtEachStep")
	}
	stop := os.Getenv("CHECKPOINT_HELPER_STOP")
	x, err := tools.NewExecutor(tools.Options{Workspace: ws, MaxWriteBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(os.Getenv("CHECKPOINT_HELPER_STORE"), ws, Options{})
	if err != nil {
		t.Fatal(err)
	}
	st.step = func(name string) {
		fmt.Printf("step %s\n", name)
		if name == stop {
			time.Sleep(time.Hour) // killed here
		}
	}
	content, _ := os.ReadFile(os.Getenv("CHECKPOINT_HELPER_NEW"))
	raw, _ := json.Marshal(map[string]string{"path": "f", "content": string(content)})
	p, err := x.Prepare("write_file", raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Guard(context.Background(), Meta{TurnID: "t", Tool: "write_file", Replaces: p.Replaces()}, p.Changes(), func() (string, error) {
		return p.Run(context.Background())
	}); err != nil {
		t.Fatal(err)
	}
	fmt.Println("step done")
	time.Sleep(time.Hour)
}

// TestCrashAtEachStep kills (SIGKILL) a process changing a file at each step
// of its checkpoint, and at random moments during a large write, and
// checks that what is on disk is the old file or the new one, and that the
// reopened store says which, and takes the new one back to the old.
func TestCrashAtEachStep(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	type run struct {
		stop  string        // a Guard step to be killed at
		delay time.Duration // or: kill this long after the previous state was captured
		size  int
	}
	var runs []run
	for _, s := range []string{"linked", "captured", "begun", "changed", "finished"} {
		runs = append(runs, run{stop: s, size: 1 << 10})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 6; i++ {
		runs = append(runs, run{delay: time.Duration(rng.IntN(300)) * time.Millisecond, size: 4 << 20})
	}
	for i, r := range runs {
		t.Run(fmt.Sprintf("%d-%s%v", i, r.stop, r.delay), func(t *testing.T) {
			ws, data := t.TempDir(), t.TempDir()
			store := filepath.Join(data, "checkpoints")
			old := bytes.Repeat([]byte("old "), r.size/4)
			nw := bytes.Repeat([]byte("NEW "), r.size/4)
			if err := os.WriteFile(filepath.Join(ws, "f"), old, 0o640); err != nil {
				t.Fatal(err)
			}
			newFile := filepath.Join(data, "new")
			if err := os.WriteFile(newFile, nw, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCheckpointedWrite$", "-test.v")
			cmd.Env = append(os.Environ(), "CHECKPOINT_HELPER_WS="+ws, "CHECKPOINT_HELPER_STORE="+store,
				"CHECKPOINT_HELPER_NEW="+newFile, "CHECKPOINT_HELPER_STOP="+r.stop)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			reached := make(chan struct{})
			go func() {
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					want := "step " + r.stop
					if r.stop == "" {
						want = "step captured"
					}
					if sc.Text() == want || sc.Text() == "step done" {
						close(reached)
						break
					}
				}
				for sc.Scan() {
				}
			}()
			select {
			case <-reached:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the helper never reached its step")
			}
			time.Sleep(r.delay)
			cmd.Process.Signal(syscall.SIGKILL)
			cmd.Wait()

			got, err := os.ReadFile(filepath.Join(ws, "f"))
			if err != nil {
				t.Fatal(err)
			}
			isOld, isNew := bytes.Equal(got, old), bytes.Equal(got, nw)
			t.Logf("after the kill the file is old: %v, new: %v", isOld, isNew)
			if !isOld && !isNew {
				t.Fatalf("after the kill the file is neither old nor new (%d bytes)", len(got))
			}
			st, err := Open(store, ws, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			turns, err := st.List(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			if isOld {
				if len(turns) != 0 {
					t.Fatalf("the file is old, yet a change is recorded: %+v", turns)
				}
				return
			}
			// New: the checkpoint must say so, and hold the old bytes.
			if len(turns) != 1 {
				t.Fatalf("the file is new, yet %d changes are recorded (stop %q)", len(turns), r.stop)
			}
			if _, err := st.Undo(context.Background(), "t", nil, false); err != nil {
				t.Fatal(err)
			}
			got, _ = os.ReadFile(filepath.Join(ws, "f"))
			fi, _ := os.Stat(filepath.Join(ws, "f"))
			if !bytes.Equal(got, old) || fi.Mode().Perm() != 0o640 {
				t.Fatalf("undo after the crash: %d bytes, mode %v", len(got), fi.Mode())
			}
			// Nothing of the workspace but f (no half-written temporary
			// file is mistaken for data).
			ents, _ := os.ReadDir(ws)
			for _, e := range ents {
				if e.Name() != "f" && !strings.Contains(e.Name(), ".jarvis-") {
					t.Fatalf("unexpected %s", e.Name())
				}
			}
		})
	}
}
