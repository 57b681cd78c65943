package acpagent

import (
	"encoding/json"
	"strings"
	"testing"
)

// A permission the user denies is not a failure: codex-acp's "reject" option
// aborts its turn (stopReason "cancelled"); the turn then says the user
// denied it and the agent is told so and goes on, in the same session.
func TestDeniedPermissionTheAgentGoesOn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := &fileHost{allow: false}
	res, _, err := f.prompt("abort", h)
	if err != nil {
		t.Fatalf("a denied permission failed the turn: %v", err)
	}
	if len(res.Denied) != 1 || res.Denied[0] != "Run make clean" {
		t.Fatalf("denied %q, want the tool call's title", res.Denied)
	}
	if !strings.HasPrefix(res.Text, "I wanted to clean. ") || !strings.Contains(res.Text, "echo: The user denied permission for: Run make clean") {
		t.Fatalf("text %q: the agent was not told that the user denied it", res.Text)
	}
	again, _, err := f.prompt("whoami", nil)
	if err != nil || !strings.Contains(again.Text, "session="+res.SessionID) {
		t.Fatalf("the next turn did not go on in the same session: %q (%v)", again.Text, err)
	}
}

const pngURL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

// Images go to an agent whose promptCapabilities accept them; an agent that
// does not is not sent them, and the turn says so before it starts.
func TestImagesPassedWhenTheAgentTakesThem(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "SCRIPTED_IMAGES=1")
	res, ev, err := f.promptIn(Input{Text: "images", Images: []string{pngURL}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := strings.TrimPrefix(pngURL, "data:image/png;base64,")
	if want := "images: image/png:" + itoa(len(data)); res.Text != want || res.ImagesDropped != 0 {
		t.Fatalf("text %q (dropped %d), want %q", res.Text, res.ImagesDropped, want)
	}
	for _, k := range ev.kinds() {
		if strings.HasPrefix(k, "notice:") {
			t.Fatalf("a notice although the images were sent: %q", k)
		}
	}

	g := newFixture(t)
	res, ev, err = g.promptIn(Input{Text: "images", Images: []string{pngURL, pngURL}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kinds := ev.kinds()
	if res.Text != "images: " || res.ImagesDropped != 2 || len(kinds) == 0 || !strings.HasPrefix(kinds[0], "notice:") ||
		!strings.Contains(kinds[0], "does not take images") {
		t.Fatalf("text %q, dropped %d, events %q: want the notice first and no image sent", res.Text, res.ImagesDropped, kinds)
	}
}

// The commands an agent runs itself (not through Jarvis's terminals) are
// reported one by one, with their input and whether they failed; a command
// run through the client's terminal is not (the gate has its row).
func TestAgentsOwnCommandsReported(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	h := &fileHost{}
	res, ev, err := f.prompt("exec", h)
	if err != nil || res.Text != "ran" {
		t.Fatalf("turn %q: %v", res.Text, err)
	}
	var got []AgentTool
	ev.mu.Lock()
	for _, e := range ev.evs {
		if e.AgentTool != nil {
			got = append(got, *e.AgentTool)
		}
	}
	ev.mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("agent tools %+v, want the two it ran itself", got)
	}
	if g := got[0]; g.ID != "call_exec" || g.Title != "ls -la" || g.Kind != "execute" || !g.OK || string(g.Input) != `{"command":["ls","-la"],"cwd":"/work"}` {
		t.Errorf("first %+v (input %s)", g, g.Input)
	}
	if g := got[1]; g.ID != "call_fail" || g.OK || g.Input != nil {
		t.Errorf("second %+v", g)
	}
	if len(h.calls) != 1 || !strings.HasPrefix(h.calls[0], "run echo") {
		t.Errorf("host calls %q", h.calls)
	}
	_ = json.Valid
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// An agent that needs a sign-in, with the key its API-key method names in
// its environment (a keyring secret in chat.env): Jarvis calls
// authenticate with that method and the session starts.
func TestAPIKeySignInCallsAuthenticate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "SCRIPTED_AUTH=1", "ANTHROPIC_API_KEY=sk-test")
	res, _, err := f.prompt("hello", nil)
	if err != nil || res.Text != "echo: hello" {
		t.Fatalf("turn %q: %v", res.Text, err)
	}
}
