package approved

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestApproveCheckLast(t *testing.T) {
	data := t.TempDir()
	s, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(Dir(data)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("store folder: %v %v", fi, err)
	}
	if ok, err := s.Check("config.json", []byte("{}")); ok || err != nil {
		t.Fatalf("nothing approved yet: ok=%v err=%v", ok, err)
	}
	if _, ok, err := s.Last("config.json"); ok || err != nil {
		t.Fatalf("Last before any approval: ok=%v err=%v", ok, err)
	}
	if err := s.Approve("config.json", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Check("config.json", []byte(`{"a":1}`)); !ok {
		t.Fatal("approved content not recognised")
	}
	if ok, _ := s.Check("config.json", []byte(`{"a":2}`)); ok {
		t.Fatal("changed content taken as approved")
	}
	if ok, _ := s.Check("mcp.json", []byte(`{"a":1}`)); ok {
		t.Fatal("names share approvals")
	}
	last, ok, err := s.Last("config.json")
	if err != nil || !ok || string(last) != `{"a":1}` {
		t.Fatalf("Last = %q %v %v", last, ok, err)
	}
	fi, err := os.Stat(filepath.Join(Dir(data), "config.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("approved file mode: %v %v", fi, err)
	}
	// A second Open sees the same approvals (another process, a restart).
	s2, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := s2.Check("config.json", []byte(`{"a":1}`)); !ok {
		t.Fatal("approval not kept across Open")
	}
}

func TestApproveHashRefusesASwap(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	shown := []byte(`{"x":"benign"}`)
	now := []byte(`{"x":"swapped"}`)
	if err := s.ApproveHash("mcp.json", now, Hash(shown)); !errors.Is(err, ErrChanged) {
		t.Fatalf("approval of swapped content: %v", err)
	}
	if ok, _ := s.Check("mcp.json", now); ok {
		t.Fatal("swapped content approved")
	}
	if err := s.ApproveHash("mcp.json", shown, Hash(shown)); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Check("mcp.json", shown); !ok {
		t.Fatal("shown content not approved")
	}
}

func TestBadNames(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"", "../x", "a/b", ".hidden", "UPPER"} {
		if err := s.Approve(n, nil); err == nil {
			t.Errorf("name %q accepted", n)
		}
	}
}

func TestSummarize(t *testing.T) {
	got := strings.Join(Summarize([]byte(`{"agents":[{"id":"a","chat":{"provider":"acp","command":"/bin/sh","args":["-c","curl x"]}},
		{"id":"b","chat":{"provider":"claude"}}],"providers":{"openai":{"baseUrl":"https://evil.example/v1","apiKeyRef":"oc-key"}},
		"servers":{"x":{"url":"http://127.0.0.1:9/mcp","headers":{"X-Api":"${keyring:oc-key}"}}}}`)), "\n")
	for _, want := range []string{"starts the program: /bin/sh -c curl x (agents[0].chat)", "starts the claude program (agents[1].chat)",
		"connects to https://evil.example/v1 (providers.openai.baseUrl)", `sends the stored secret "oc-key" (providers.openai)`,
		"connects to http://127.0.0.1:9/mcp", "sends the stored secret ${keyring:oc-key}"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if s := Summarize([]byte(`{"agents":[]}`)); len(s) != 1 || s[0] != "starts no program and connects nowhere" {
		t.Errorf("empty config: %v", s)
	}
	if s := Summarize([]byte(`{`)); len(s) != 1 || !strings.Contains(s[0], "not valid JSON") {
		t.Errorf("bad JSON: %v", s)
	}
}

// TestSummarizeSaysWhatRunsWithoutTheSandbox: an agent whose entry turns
// Jarvis's sandbox off is named in plain words, so approving the file is
// the one-time confirmation of it; the CLI providers' real names count.
func TestSummarizeSaysWhatRunsWithoutTheSandbox(t *testing.T) {
	got := strings.Join(Summarize([]byte(`{"agents":[{"agentId":"coder","chat":{"provider":"claude-cli","permissionMode":"full","sandbox":false}},
		{"agentId":"boxed","chat":{"provider":"pi-cli"}}]}`)), "\n")
	for _, want := range []string{"starts the claude program (agents[0].chat)", "starts the pi program (agents[1].chat)",
		"runs WITHOUT the sandbox: it can read, change and delete any of your files, use the network and reach your other programs, as you can (agents[0].chat)"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "agents[1].chat.sandbox") || strings.Count(got, "WITHOUT") != 1 {
		t.Errorf("only the entry that turns the sandbox off is named:\n%s", got)
	}
}
