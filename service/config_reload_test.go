package service_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/service"

	"jarvis/internal/testwait"
)

func (e *env) agentIDs() []string {
	ids, _ := e.agentsAndWarning()
	return ids
}

// agentsAndWarning is GET /v1/agents: the agents' ids and the warning of a
// config reload the service refused.
func (e *env) agentsAndWarning() ([]string, string) {
	e.t.Helper()
	var l api.AgentList
	if err := e.c.Do(context.Background(), "GET", "/v1/agents", nil, &l); err != nil {
		e.t.Fatal(err)
	}
	var ids []string
	for _, a := range l.Agents {
		ids = append(ids, a.AgentID)
	}
	return ids, l.Warning
}

func TestConfigReloadWithoutRestart(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "config.json")
	write := func(agents string) {
		body := fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model"}},"agents":%s}`, e.upSrv.URL+"/v1", agents)
		// Save as editors do: a new file renamed over the old one.
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(`[{"agentId":"general"}]`)
	if err := e.svc.ReloadConfig(path); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := e.svc.WatchConfig(ctx, path); err != nil {
		t.Fatal(err)
	}
	write(`[{"agentId":"general"},{"agentId":"notes","displayName":"Notes"}]`)
	testwait.Until(t, "the new agent", 10*time.Second, func() bool { return slices.Equal(e.agentIDs(), []string{"general", "notes"}) })
	// The new agent works at once.
	r, _ := e.routeAgent("notes")
	if f := text(e.agChat(r.Session.SessionID, "hi"), api.EventFinal); f != "You said: hi" {
		t.Fatalf("final %q", f)
	}

	// An invalid file is refused with file, line and field; the old config stays.
	bad := `[{"agentId":"general"},
{"agentId":"general"}]`
	write(bad)
	// The watcher's refusal is visible (GET /v1/agents' warning): only then
	// is "the old config stays" a fact and not a race with the reload.
	testwait.Until(t, "the refusal of the invalid file", 10*time.Second, func() bool {
		_, w := e.agentsAndWarning()
		return strings.Contains(w, "config reload refused")
	})
	if ids := e.agentIDs(); !slices.Equal(ids, []string{"general", "notes"}) {
		t.Fatalf("an invalid config replaced the valid one: %v", ids)
	}
	err := e.svc.ReloadConfig(path)
	if err == nil || !strings.Contains(err.Error(), path+":2: field agents[1].agentId") || !strings.Contains(err.Error(), `duplicate agentId "general"`) {
		t.Fatalf("reload error %v", err)
	}
	// Fixing the file applies it.
	write(`[{"agentId":"general"},{"agentId":"todo"}]`)
	testwait.Until(t, "the fixed config", 10*time.Second, func() bool { return slices.Equal(e.agentIDs(), []string{"general", "todo"}) })

	// A folder that does not exist cannot be watched: said clearly.
	if err := e.svc.WatchConfig(ctx, filepath.Join(t.TempDir(), "absent", "config.json")); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("watch of a missing folder: %v", err)
	}
}

// Deleting the config file while the service runs (an editor that saves by
// delete and rename, a sync tool, git checkout) keeps the current config,
// with a warning in the log and in GET /v1/agents, until the file is back.
func TestConfigDeletedAtRunTimeKeepsTheCurrentConfig(t *testing.T) {
	var log bytes.Buffer
	var mu sync.Mutex
	e := newEnv(t, func(_ *env, o *service.Options) {
		o.Logger = slog.New(slog.NewTextHandler(lockedWriter{&mu, &log}, nil))
	})
	path := filepath.Join(t.TempDir(), "config.json")
	body := fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model"}},"agents":[{"agentId":"notes","toolAllowlist":["memory_search"]}]}`, e.upSrv.URL+"/v1")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.ReloadConfig(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.ReloadConfig(path); err == nil {
		t.Fatal("a deleted config file was reloaded without an error")
	}
	if ids := e.agentIDs(); !slices.Equal(ids, []string{"notes"}) {
		t.Fatalf("the deleted file switched the service to the defaults: agents %v", ids)
	}
	var l api.AgentList
	if err := e.c.Do(context.Background(), "GET", "/v1/agents", nil, &l); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(l.Warning, "config.json") || !strings.Contains(l.Warning, "kept") {
		t.Fatalf("GET /v1/agents warning %q", l.Warning)
	}
	mu.Lock()
	logged := log.String()
	mu.Unlock()
	if !strings.Contains(logged, "level=WARN") || !strings.Contains(logged, "config.json") {
		t.Fatalf("no warning logged:\n%s", logged)
	}
	// The file comes back: applied, and the warning goes.
	if err := os.WriteFile(path, []byte(strings.Replace(body, `"notes"`, `"todo"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.ReloadConfig(path); err != nil {
		t.Fatal(err)
	}
	l = api.AgentList{}
	if err := e.c.Do(context.Background(), "GET", "/v1/agents", nil, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Agents) != 1 || l.Agents[0].AgentID != "todo" || l.Warning != "" {
		t.Fatalf("after the file came back: %+v", l)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
