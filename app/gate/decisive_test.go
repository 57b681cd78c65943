package gate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestPromptShowsTheDecisiveArgumentFirst: whatever other arguments a
// model adds, the prompt's data starts with what the call acts on, in full
// (the program with its arguments, the path), and carries the model's own
// spelling next to the canonical form that will run.
func TestPromptShowsTheDecisiveArgumentFirst(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	long := strings.Repeat("a", 5000)
	ch := f.handle(context.Background(), req("run_command", `{"program":"rm","args":["-rf","`+long+`","build"],"cwd":"./"}`, ""))
	p := f.answer(Answer{Choice: Refuse})
	wait(t, ch)
	var got struct {
		Decisive  []struct{ Name, Value string } `json:"decisive"`
		Requested json.RawMessage                `json:"requested"`
		Arguments json.RawMessage                `json:"arguments"`
	}
	b, _ := json.Marshal(p)
	json.Unmarshal(b, &got)
	if len(got.Decisive) == 0 || got.Decisive[0].Name != "command" || got.Decisive[0].Value != "rm -rf "+long+" build" {
		t.Fatalf("decisive %+v, want the whole command line first", got.Decisive)
	}
	if len(got.Decisive) < 2 || got.Decisive[1].Name != "folder" || got.Decisive[1].Value != "." {
		t.Fatalf("decisive %+v, want the folder next", got.Decisive)
	}
	if !strings.Contains(string(got.Requested), `"cwd":"./"`) || strings.Contains(string(got.Arguments), `"./"`) {
		t.Fatalf("requested %s, arguments %s: want the model's spelling and the canonical form", got.Requested, got.Arguments)
	}

	ch = f.handle(context.Background(), req("write_file", `{"content":"`+long+`","path":"notes//a.md"}`, ""))
	p = f.answer(Answer{Choice: Refuse})
	wait(t, ch)
	b, _ = json.Marshal(p)
	got.Decisive = nil
	json.Unmarshal(b, &got)
	if len(got.Decisive) == 0 || got.Decisive[0].Name != "path" || got.Decisive[0].Value != "notes/a.md" {
		t.Fatalf("decisive %+v, want the canonical path first", got.Decisive)
	}
}
