package acpagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func (e *events) choices() []Choices {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Choices
	for _, ev := range e.evs {
		if ev.Choices != nil {
			out = append(out, *ev.Choices)
		}
	}
	return out
}

func (e *events) diffs() []Diff {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Diff
	for _, ev := range e.evs {
		if ev.Diff != nil {
			out = append(out, *ev.Diff)
		}
	}
	return out
}

// The session's modes and models are reported when it opens; the user's
// choice is sent with session/set_mode and session/set_model (at once when
// the session is open, else before the next prompt), an unknown one is
// refused saying what the agent offers, and the agent's own change of mode
// (current_mode_update) is followed.
func TestModesAndModelsChosenAndKept(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "SCRIPTED_MODES=1")
	// Chosen before any session: sent to the first one.
	if _, err := f.a.Choose(t.Context(), "plan", ""); err != nil {
		t.Fatal(err)
	}
	res, ev, err := f.prompt("mode", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "mode=plan model=small" {
		t.Fatalf("the agent is in %q, want mode plan sent before the prompt", res.Text)
	}
	cs := ev.choices()
	if len(cs) != 1 || cs[0].Mode != "plan" || cs[0].Model != "small" || len(cs[0].Modes) != 3 || len(cs[0].Models) != 2 || cs[0].Modes[1].Name != "Code" {
		t.Fatalf("choices reported %+v, want the session's 3 modes and 2 models, plan and small current", cs)
	}

	// Chosen while the session is open: sent at once.
	got, err := f.a.Choose(t.Context(), "", "large")
	if err != nil || got.Model != "large" {
		t.Fatalf("Choose(model large) = %+v, %v", got, err)
	}
	if res, _, _ := f.prompt("mode", nil); res.Text != "mode=plan model=large" {
		t.Fatalf("after choosing the model: %q", res.Text)
	}
	if _, err := f.a.Choose(t.Context(), "yolo", ""); err == nil || !strings.Contains(err.Error(), `does not offer the mode "yolo" (it offers: ask, code, plan)`) {
		t.Fatalf("an unknown mode: %v", err)
	}

	// The agent leaves plan mode itself: the window hears of it.
	_, ev, err = f.prompt("leaveplan", nil)
	if err != nil {
		t.Fatal(err)
	}
	if cs := ev.choices(); len(cs) != 1 || cs[0].Mode != "code" {
		t.Fatalf("current_mode_update reported as %+v, want mode code", cs)
	}
	if c := f.a.Choices(); c.Mode != "code" || c.Model != "large" {
		t.Fatalf("Choices() = %+v", c)
	}
}

// A choice kept with the Jarvis session (Input.Mode/Model, read back after
// a restart) reaches a new agent process's session; a choice the agent
// does not offer is a notice, not a failure.
func TestChoiceFromTheSessionReachesANewProcess(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "SCRIPTED_MODES=1")
	res, _, err := f.promptIn(Input{Text: "mode", Mode: "code", Model: "large"}, nil)
	if err != nil || res.Text != "mode=code model=large" {
		t.Fatalf("turn %q (%v), want mode code and model large", res.Text, err)
	}
	g := newFixture(t, "SCRIPTED_MODES=1")
	res, ev, err := g.promptIn(Input{Text: "mode", Mode: "review"}, nil)
	if err != nil || res.Text != "mode=ask model=small" {
		t.Fatalf("turn %q (%v)", res.Text, err)
	}
	if k := ev.kinds(); len(k) == 0 || !strings.Contains(k[0], `does not offer the mode "review" now`) {
		t.Fatalf("events %q: no notice of the mode it does not offer", k)
	}
	// An agent without modes reports none.
	h := newFixture(t)
	_, ev, err = h.prompt("whoami", nil)
	if err != nil || len(ev.choices()) != 0 || !h.a.Choices().Empty() {
		t.Fatalf("an agent without modes: %+v (%v)", ev.choices(), err)
	}
}

// A tool call's diff is reported once it completed, saying whether Jarvis
// wrote the file (through fs/write_text_file: checkpointed by the desktop)
// or the agent wrote it itself (no copy of the old text held by Jarvis).
func TestDiffsOfToolCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	path := filepath.Join(f.dir, "notes.txt")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &fileHost{allow: true}
	_, ev, err := f.prompt("edit "+path+" new", h)
	if err != nil {
		t.Fatal(err)
	}
	d := ev.diffs()
	if len(d) != 1 || d[0].Path != path || d[0].Old == nil || *d[0].Old != "old\n" || d[0].New != "new" || !d[0].Checkpointed || d[0].Title != "Edit notes.txt" {
		t.Fatalf("diffs %+v, want one of notes.txt written through Jarvis", d)
	}
	other := filepath.Join(f.dir, "fresh.txt")
	_, ev, err = f.prompt("selfedit "+other+" hello", h)
	if err != nil {
		t.Fatal(err)
	}
	d = ev.diffs()
	if len(d) != 1 || d[0].Old != nil || d[0].New != "hello" || d[0].Checkpointed {
		t.Fatalf("diffs %+v, want one new file the agent wrote itself (not checkpointed)", d)
	}
}
