package gate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/tools"
)

// TestEverySpellingOfATargetIsMatchedOrRefused is the regression test of
// "argument spelling bypasses policy": every spelling of config/.env (key
// case, Unicode folding, ./, //, a trailing slash, the absolute path, a
// symlink, ".." landing back inside, NUL) is either matched by the rule
// `deny read_file path=config/*` or refused as forbidden; none reads the file.
func TestEverySpellingOfATargetIsMatchedOrRefused(t *testing.T) {
	f := newFixture(t, Policy{Rules: []Rule{
		{Tool: "read_file", Args: map[string]string{"path": "config/*"}, Action: Deny},
		{Tool: "run_command", Args: map[string]string{"program": "git", "args": "push*"}, Action: Deny},
		{Tool: "*", Action: Allow},
	}}, PrompterOptions{})
	const secret = "API_KEY=hunter2"
	must(t, os.MkdirAll(filepath.Join(f.ws, "config"), 0o755))
	must(t, os.WriteFile(filepath.Join(f.ws, "config", ".env"), []byte(secret), 0o600))
	must(t, os.Symlink(filepath.Join(f.ws, "config", ".env"), filepath.Join(f.ws, "link.env")))
	must(t, os.Symlink("config", filepath.Join(f.ws, "cfg")))
	must(t, os.MkdirAll(filepath.Join(f.ws, "x"), 0o755))
	abs := filepath.Join(f.ws, "config", ".env")
	real, _ := filepath.EvalSymlinks(abs)

	readSpellings := []string{
		`{"path":"config/.env"}`,
		`{"PATH":"config/.env"}`,
		`{"Path":"config/.env"}`,
		`{"pa\u0074h":"config/.env"}`, // an escaped key is the same key
		`{"path":"./config/.env"}`,
		`{"path":"config//.env"}`,
		`{"path":"config/./.env"}`,
		`{"path":"config/.env/"}`,
		`{"path":".//config///.env"}`,
		`{"path":` + jsonString(abs) + `}`,
		`{"path":` + jsonString(real) + `}`,
		`{"path":"link.env"}`,
		`{"path":"cfg/.env"}`,
		`{"path":"./cfg//.env"}`,
		`{"path":"x/../config/.env"}`,
		`{"path":"config/.env\u0000"}`,
		`{"path":"config/.env\u0000.txt"}`,
		`{"path":"other.txt","path":"config/.env"}`,
		`{"path":"config/.env","PATH":"other.txt"}`,
		`{"path":"other.txt","PATH":"config/.env"}`,
		`{"path":"other.txt","Path":"config/.env"}`,
	}
	for _, args := range readSpellings {
		t.Run(args, func(t *testing.T) {
			out := f.gate.Handle(context.Background(), req("read_file", args, ""), f.x.Execute)
			if out.OK || strings.Contains(out.Result, secret) {
				t.Fatalf("%s read the file: %+v", args, out)
			}
			d := out.Decision
			matched := d.Rule != nil && d.Rule.Action == Deny && d.Rule.Tool == "read_file"
			refused := d.Class == tools.Forbidden
			if !matched && !refused {
				t.Fatalf("%s: neither matched by the rule nor refused: %+v", args, d)
			}
		})
	}

	// Case in the path names another file on a case-sensitive file system;
	// where it names the same one, the rule must see it.
	t.Run("path case", func(t *testing.T) {
		out := f.gate.Handle(context.Background(), req("read_file", `{"path":"CONFIG/.env"}`, ""), f.x.Execute)
		if strings.Contains(out.Result, secret) {
			t.Fatalf("CONFIG/.env read the file: %+v", out)
		}
	})

	// run_command: the only tool argument with an "s" is "args", which
	// encoding/json would fold from "argſ" (U+017F) and "ARGS".
	cmdSpellings := []string{
		`{"program":"git","args":["push","origin"]}`,
		`{"program":"git","argſ":["push","origin"]}`,
		`{"program":"git","ARGS":["push","origin"]}`,
		`{"program":"git","args":["status"],"ARGS":["push","origin"]}`,
		`{"program":"git","args":["status"],"argſ":["push","origin"]}`,
		`{"program":"git","args":["status"],"args":["push","origin"]}`,
		`{"PROGRAM":"git","args":["push","origin"]}`,
		`{"program":"git","Program":"ls","args":["push"]}`,
		`{"program":"git","args":["push"],"cwd":"./"}`,
		`{"program":"git","args":["push"],"cwd":"cfg"}`,
	}
	ran := map[string]bool{}
	exec := func(ctx context.Context, name string, args json.RawMessage) (string, error) {
		ran[string(args)] = true
		return "ran", nil
	}
	for _, args := range cmdSpellings {
		t.Run(args, func(t *testing.T) {
			out := f.gate.Handle(context.Background(), req("run_command", args, ""), exec)
			if out.OK {
				t.Fatalf("%s ran: %+v", args, out)
			}
			d := out.Decision
			matched := d.Rule != nil && d.Rule.Action == Deny && d.Rule.Tool == "run_command"
			if !matched && d.Class != tools.Forbidden {
				t.Fatalf("%s: neither matched nor refused: %+v", args, d)
			}
		})
	}
	if len(ran) != 0 {
		t.Fatalf("the executor ran %v", ran)
	}
}

// TestExecutorRunsTheClassifiedCall checks that the call the executor gets
// is the canonical one the policy judged, the audit recorded and the prompt
// showed.
func TestExecutorRunsTheClassifiedCall(t *testing.T) {
	f := newFixture(t, Policy{Rules: []Rule{{Tool: "write_file", Args: map[string]string{"path": "notes/*"}, Action: Ask}}}, PrompterOptions{})
	must(t, os.MkdirAll(filepath.Join(f.ws, "notes"), 0o755))
	ch := f.handle(context.Background(), req("write_file", `{"content":"hi","path":".//notes/../notes/a.md"}`, ""))
	o := wait(t, ch)
	if o.Decision.Class != tools.Forbidden {
		t.Fatalf("a path with .. must be refused: %+v", o)
	}
	ch = f.handle(context.Background(), req("write_file", `{"content":"hi","path":"./notes//a.md"}`, ""))
	p := f.answer(Answer{Choice: Once})
	want := `{"content":"hi","path":"notes/a.md"}`
	if string(p.Arguments) != want {
		t.Fatalf("prompt shows %s, want the canonical %s", p.Arguments, want)
	}
	o = wait(t, ch)
	if !o.OK {
		t.Fatalf("%+v", o)
	}
	calls := f.executed()
	if len(calls) != 1 || calls[0].args != want {
		t.Fatalf("executed %+v, want %s", calls, want)
	}
	if e := f.lastAudit(); string(e.Arguments) != want || !strings.Contains(e.Reason, `requested as {"content":"hi","path":"./notes//a.md"}`) {
		t.Fatalf("audit records %s (%s), want %s and the model's spelling", e.Arguments, e.Reason, want)
	}
	// Another order of the same names is the same spelling.
	ch = f.handle(context.Background(), req("write_file", `{"path":"notes/a.md", "content":"hi"}`, ""))
	if p := f.answer(Answer{Choice: Once}); p.Requested != nil {
		t.Fatalf("prompt names a different spelling: %s", p.Requested)
	}
	wait(t, ch)
	if e := f.lastAudit(); strings.Contains(e.Reason, "requested as") {
		t.Fatalf("reason %q", e.Reason)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
