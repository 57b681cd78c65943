package acprt_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/internal/testhttp"
	"jarvis/service/acprt"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/redact"
	"jarvis/service/store"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
)

// serve is the runtime's routes on a real HTTP server.
func serve(t *testing.T, rt *acprt.Runtime) string {
	mux := http.NewServeMux()
	for _, r := range rt.Routes() {
		mux.Handle(r.Pattern, httpapi.Adapt(slog.New(slog.DiscardHandler), r.Handle))
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// statuses are the status events of kind published so far.
func statuses(events []turntest.Event, kind string) []api.StatusEvent {
	var out []api.StatusEvent
	for _, ev := range events {
		var st api.StatusEvent
		if ev.Type == api.EventStatus && json.Unmarshal(ev.Data, &st) == nil && st.Kind == kind {
			out = append(out, st)
		}
	}
	return out
}

// The picker's round trip: a mode chosen before the first turn is kept
// with the session and sent to the agent's session; the session's modes
// and models reach the window as a status of kind agent_choices; a model
// chosen while the agent runs is sent at once; an unknown mode is refused
// and nothing is kept; after a restart of the service the kept choice
// reaches the new agent process.
func TestACPModesAndModelsPicker(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the scripted agent uses Unix sessions")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "scriptedagent")
	if out, err := exec.Command("go", "build", "-o", bin, "../acpagent/testdata/scriptedagent").CombinedOutput(); err != nil {
		t.Fatalf("build the scripted agent: %v\n%s", err, out)
	}
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"agents":[{"agentId":"coder","displayName":"Coder","chat":{"provider":"acp","command":%q,"env":{"SCRIPTED_MODES":"1"}}}],"toolResultTimeoutSeconds":30}`, bin)))
	if err != nil {
		t.Fatal(err)
	}
	env, rec := turntest.Env(t, dir, cfg)
	opts := acprt.Options{Waiter: toolwait.New(env),
		Instructions:    func(*config.Config, config.Agent) string { return "Be brief." },
		InstructionsKey: func(*config.Config, config.Agent) string { return "k1" }}
	agent, _ := cfg.Agent("coder")
	first := acprt.New(env, opts)
	base := serve(t, first)

	tt, sess := turntest.Begin(t, env, "coder", "mode")
	u := base + "/v1/sessions/" + sess.ID + "/agent-choice"
	var got api.AgentChoices
	testhttp.Do(t, "PUT", u, `{"mode":"plan"}`, 200, &got)
	if got.Mode != "plan" {
		t.Fatalf("PUT before the first turn answered %+v", got)
	}
	reread := func() store.Session {
		s, err := env.Store.Session(context.Background(), sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	out := first.Run(context.Background(), tt, reread(), agent)
	if out.Fail != nil || out.Final != "mode=plan model=small" {
		t.Fatalf("first turn %+v: the kept mode was not sent", out)
	}
	cs := statuses(rec.Events(), "agent_choices")
	if len(cs) != 1 || cs[0].Choices == nil || cs[0].Choices.Mode != "plan" || len(cs[0].Choices.Modes) != 3 || len(cs[0].Choices.Models) != 2 ||
		cs[0].Text != "Coder: mode Plan, model Small" || cs[0].TurnID != tt.ID {
		t.Fatalf("agent_choices statuses %+v", cs)
	}

	testhttp.Do(t, "PUT", u, `{"model":"large"}`, 200, &got)
	if got.Model != "large" || got.Mode != "plan" || len(got.Models) != 2 {
		t.Fatalf("PUT model answered %+v", got)
	}
	testhttp.Fails(t, "PUT", u, `{"mode":"yolo"}`, 400, "invalid_choice")
	testhttp.Fails(t, "PUT", u, `{}`, 400, "missing_field")
	testhttp.Fails(t, "GET", base+"/v1/sessions/nope/agent-choice", "", 404, "session_not_found")
	if a := reread().Attributes; a != `{"acp":{"mode":"plan","model":"large"}}` {
		t.Fatalf("attributes %s", a)
	}
	if _, err := env.Store.AddMessage(context.Background(), *out.Last); err != nil {
		t.Fatal(err)
	}
	first.Close()

	second := acprt.New(env, opts)
	t.Cleanup(second.Close)
	var kept api.AgentChoices
	testhttp.Do(t, "GET", serve(t, second)+"/v1/sessions/"+sess.ID+"/agent-choice", "", 200, &kept)
	if kept.Mode != "plan" || kept.Model != "large" || kept.Modes != nil {
		t.Fatalf("GET with no agent running: %+v, want the kept choice alone", kept)
	}
	tt2 := &turn.Turn{ID: turn.NewID("t_"), SessionID: sess.ID, Done: make(chan struct{}), User: tt.User}
	if again := second.Run(context.Background(), tt2, reread(), agent); again.Fail != nil || again.Final != "mode=plan model=large" {
		t.Fatalf("after the restart %+v, want the kept mode and model", again)
	}
}

// A file change the agent reports is a diff card (status kind "diff"):
// undo "turn" when Jarvis wrote the file through the desktop's write_file
// (checkpointed there), "none" when the agent wrote it itself. Each card is
// kept with its turn as a status line, a secret Jarvis knows removed from
// the file's text.
func TestACPDiffCards(t *testing.T) {
	f := newFixture(t)
	red := &redact.Set{}
	red.Add("s3cret-value-42")
	f.rt.Close()
	f.rt = acprt.New(f.env, acprt.Options{Waiter: f.waiter, Red: red,
		Instructions:    func(*config.Config, config.Agent) string { return "Be brief." },
		InstructionsKey: func(*config.Config, config.Agent) string { return "k1" }})
	t.Cleanup(f.rt.Close)
	work := filepath.Join(f.env.DataDir, "acp", "coder")
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(work, "a.txt")
	if err := os.WriteFile(path, []byte("before"), 0o600); err != nil {
		t.Fatal(err)
	}
	tt, sess := turntest.Begin(t, f.env, "coder", "edit "+path+" after")
	done := make(chan turn.Outcome, 1)
	go func() { done <- f.run(tt, sess) }()
	f.answer(t, sess.ID, "write_file", true, "written")
	if o := <-done; o.Fail != nil {
		t.Fatalf("outcome %+v", o.Fail)
	}
	tt2, sess2 := turntest.Begin(t, f.env, "coder", "selfedit "+filepath.Join(work, "b.txt")+" new file s3cret-value-42")
	if o := f.run(tt2, sess2); o.Fail != nil {
		t.Fatalf("outcome %+v", o.Fail)
	}
	ds := statuses(f.rec.Events(), "diff")
	if len(ds) != 2 {
		t.Fatalf("diff statuses %+v, want 2", ds)
	}
	if d := ds[0].Diff; d == nil || d.Path != path || d.Old == nil || *d.Old != "before" || d.New != "after" || d.Undo != "turn" || ds[0].TurnID != tt.ID {
		t.Errorf("the diff written through Jarvis: %+v", ds[0])
	}
	if d := ds[1].Diff; d == nil || d.Old != nil || !strings.HasPrefix(d.New, "new file ") || d.Undo != "none" || !strings.Contains(ds[1].Text, "cannot undo") {
		t.Errorf("the diff the agent wrote itself: %+v %q", d, ds[1].Text)
	}
	for i, sid := range []string{sess.ID, sess2.ID} {
		msgs, err := f.env.Store.Messages(context.Background(), sid)
		if err != nil {
			t.Fatal(err)
		}
		var kept []store.Message
		for _, m := range msgs {
			if m.Role == "status" && strings.Contains(m.Meta, `"kind":"diff"`) {
				kept = append(kept, m)
			}
		}
		if len(kept) != 1 || kept[0].TurnID != []string{tt.ID, tt2.ID}[i] || kept[0].Content != ds[i].Text {
			t.Fatalf("diff lines kept in session %d: %+v", i, kept)
		}
		if i == 1 && (strings.Contains(kept[0].Meta, "s3cret-value-42") || !strings.Contains(kept[0].Meta, `"new":"new file `+redact.Mark+`"`)) {
			t.Errorf("the kept card still holds the secret: %s", kept[0].Meta)
		}
	}
}
