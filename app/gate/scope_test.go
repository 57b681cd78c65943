package gate

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"jarvis/app/audit"
)

// "Always allow" on a file write stores a rule for that file, not for every
// write anywhere: another path still prompts.
func TestAlwaysAllowIsScopedToTheFile(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	ctx := context.Background()
	ch := f.handle(ctx, req("write_file", `{"path":"notes/todo.txt","content":"milk"}`, ""))
	p := f.answer(Answer{Choice: Always})
	if o := wait(t, ch); !o.OK || o.DecidedBy != audit.ByUser {
		t.Fatalf("first: %+v", o)
	}
	if len(p.Scopes) < 2 || p.Scopes[0].Label == "" {
		t.Fatalf("the prompt offers no scopes to see before saving: %+v", p.Scopes)
	}
	want := Rule{Tool: "write_file", Args: map[string]string{"path": "notes/todo.txt"}, Action: Allow}
	if got := f.gate.Policy().Rules; len(got) != 1 || got[0].Origin == nil || !reflect.DeepEqual(withoutOrigin(got[0]), want) {
		t.Fatalf("saved rule %+v, want %+v", got, want)
	}
	// The same file with other content runs; another file still prompts.
	if d := f.gate.Classify(req("write_file", `{"path":"notes/todo.txt","content":"eggs"}`, "")); d.Action != Run {
		t.Fatalf("same file: %+v", d)
	}
	for _, other := range []string{`{"path":"notes/other.txt","content":"x"}`, `{"path":".bashrc","content":"x"}`} {
		if d := f.gate.Classify(req("write_file", other, "")); d.Action != AskUser {
			t.Fatalf("%s is covered by the rule from the prompt: %+v", other, d)
		}
	}
}

// The user may widen the rule on purpose, to one of the scopes the prompt
// showed (here the folder); a scope the prompt did not offer is refused.
func TestAlwaysAllowWidenedToTheFolder(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	ctx := context.Background()
	ch := f.handle(ctx, req("write_file", `{"path":"notes/todo.txt","content":"milk"}`, ""))
	p := f.waitPending(1)[0]
	if p.Scopes[1].Rule.Args["path"] != "notes/*" {
		t.Fatalf("folder scope %+v", p.Scopes[1])
	}
	if err := f.prompter.Answer(p.ID, Answer{Choice: Always, Scope: 1}); err != nil {
		t.Fatal(err)
	}
	wait(t, ch)
	if d := f.gate.Classify(req("write_file", `{"path":"notes/sub/b.txt","content":"x"}`, "")); d.Action != Run {
		t.Fatalf("a file in the folder: %+v", d)
	}
	if d := f.gate.Classify(req("write_file", `{"path":"notes.txt","content":"x"}`, "")); d.Action != AskUser {
		t.Fatalf("a file beside the folder: %+v", d)
	}

	ch = f.handle(ctx, req("open_app", `{"app_id":"firefox"}`, ""))
	p = f.waitPending(1)[0]
	if err := f.prompter.Answer(p.ID, Answer{Choice: Always, Scope: 99}); !errors.Is(err, ErrBadAnswer) {
		t.Fatalf("a scope the prompt did not offer: %v", err)
	}
	if err := f.prompter.Answer(p.ID, Answer{Choice: Always}); err != nil { // still open
		t.Fatal(err)
	}
	wait(t, ch)
	rules := f.gate.Policy().Rules
	if got := rules[len(rules)-1]; got.Args["app_id"] != "firefox" {
		t.Fatalf("default scope saved %+v", got)
	}
}

// The Permissions page lists, edits and revokes rules; a change made from a
// stale list (someone else changed the rule meanwhile) is refused.
func TestEditAndRevokeRules(t *testing.T) {
	r0 := Rule{Tool: "write_file", Args: map[string]string{"path": "a.txt"}, Action: Allow}
	r1 := Rule{Tool: "run_command", Args: map[string]string{"program": "rm"}, Action: Deny}
	f := newFixture(t, Policy{Rules: []Rule{r0, r1}}, PrompterOptions{})
	if d := f.gate.Classify(req("write_file", `{"path":"a.txt","content":"x"}`, "")); d.Action != Run {
		t.Fatalf("before revoke: %+v", d)
	}
	if err := f.gate.RemoveRule(0, r1); !errors.Is(err, ErrRuleChanged) {
		t.Fatalf("stale remove: %v", err)
	}
	if err := f.gate.RemoveRule(0, r0); err != nil {
		t.Fatal(err)
	}
	if d := f.gate.Classify(req("write_file", `{"path":"a.txt","content":"x"}`, "")); d.Action != AskUser {
		t.Fatalf("after revoke: %+v", d)
	}
	if err := f.gate.ReplaceRule(0, r1, Rule{Tool: "run_command", Action: "maybe"}); err == nil {
		t.Fatal("an invalid rule was accepted")
	}
	ask := Rule{Tool: "run_command", Args: map[string]string{"program": "rm"}, Action: Ask}
	if err := f.gate.ReplaceRule(0, r1, ask); err != nil {
		t.Fatal(err)
	}
	if got := f.gate.Policy().Rules; !reflect.DeepEqual(got, []Rule{ask}) {
		t.Fatalf("policy %+v", got)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.saved) != 2 || !reflect.DeepEqual(f.saved[1].Rules, []Rule{ask}) {
		t.Fatalf("saved %+v", f.saved)
	}
}

// The file tools that change files offer the call's own target first, as
// write_file does: "always allow" on an edit never saves "every edit_file call".
func TestAlwaysAllowIsScopedForEveryFileTool(t *testing.T) {
	for _, c := range []struct {
		tool, args string
		want       map[string]string
	}{
		{"edit_file", `{"path":"notes/a.md","old_string":"x","new_string":"y"}`, map[string]string{"path": "notes/a.md"}},
		{"make_dir", `{"path":"build/out"}`, map[string]string{"path": "build/out"}},
		{"delete_path", `{"path":"old.txt"}`, map[string]string{"path": "old.txt"}},
		{"search_files", `{"path":"docs","content":"x"}`, map[string]string{"path": "docs"}},
		{"move_path", `{"from":"a.txt","to":"b/a.txt"}`, map[string]string{"from": "a.txt", "to": "b/a.txt"}},
	} {
		var args map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.args), &args); err != nil {
			t.Fatal(err)
		}
		scopes := alwaysScopes(c.tool, args, "")
		if got := scopes[0].Rule; !reflect.DeepEqual(got.Args, c.want) || got.Tool != c.tool || got.Action != Allow {
			t.Errorf("%s: narrowest scope %+v (%q), want the call's own target %v", c.tool, got, scopes[0].Label, c.want)
		}
	}
}

// withoutOrigin is r without where it came from (origin_test.go checks that).
func withoutOrigin(r Rule) Rule {
	r.Origin = nil
	return r
}
