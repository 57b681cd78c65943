package service_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/internal/approved"
	"jarvis/service"
)

// TestSetupPageWritesAreApproved: a fresh install's config file written by
// the setup page is applied with no question (Jarvis wrote it through its
// own UI), while a change made outside Jarvis since is not applied, and the
// setup page refuses to rewrite over it (that would approve it unseen).
func TestSetupPageWritesAreApproved(t *testing.T) {
	cfgPath := filepath.Join(t.TempDir(), "jarvis", "config.json")
	var store *approved.Store
	e := newEnv(t, func(e *env, o *service.Options) {
		var err error
		if store, err = approved.Open(e.dir); err != nil {
			t.Fatal(err)
		}
		o.ConfigPath, o.Approved = cfgPath, store
	})
	st, b := e.call("PUT", "/v1/providers", api.SetProviderRequest{Provider: "openai-compatible", BaseURL: e.upSrv.URL + "/v1", Model: "test-model"})
	if st != http.StatusOK {
		t.Fatalf("PUT /v1/providers: %d %s", st, b)
	}
	written, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := store.Check("config.json", written); !ok || err != nil {
		t.Fatalf("the setup page's write is not approved: %v", err)
	}
	if _, warning := e.agentsAndWarning(); warning != "" {
		t.Fatalf("warning after the setup page's write: %q", warning)
	}

	// Another program adds an agent: not applied, and the setup page will
	// not rewrite the file over it.
	changed := strings.Replace(string(written), "{", `{"agents":[{"agentId":"general"},{"agentId":"added"}],`, 1)
	if err := os.WriteFile(cfgPath, []byte(changed), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.ReloadConfig(cfgPath); err != service.ErrConfigNotApproved {
		t.Fatalf("reload of an unapproved change: %v", err)
	}
	if ids, warning := e.agentsAndWarning(); slices.Contains(ids, "added") || !strings.Contains(warning, "jarvis config approve") {
		t.Fatalf("agents %v warning %q", ids, warning)
	}
	st, b = e.call("PUT", "/v1/providers", api.SetProviderRequest{Provider: "openai-compatible", BaseURL: e.upSrv.URL + "/v1", Model: "other"})
	if st != http.StatusConflict || !strings.Contains(string(b), "config_not_approved") {
		t.Fatalf("setup write over an unapproved change: %d %s", st, b)
	}
	if now, _ := os.ReadFile(cfgPath); string(now) != changed {
		t.Fatal("the setup page rewrote a file with unapproved changes")
	}
	// The window shows the pending content and approves it by its hash; a
	// file changed since what was shown is refused.
	var l api.AgentList
	if err := e.c.Do(context.Background(), "GET", "/v1/agents", nil, &l); err != nil {
		t.Fatal(err)
	}
	if l.PendingConfig == nil || l.PendingConfig.Hash != approved.Hash([]byte(changed)) || l.PendingConfig.Path != cfgPath {
		t.Fatalf("pending config %+v", l.PendingConfig)
	}
	st, b = e.call("POST", "/v1/config/approve", api.ApproveConfigRequest{Hash: approved.Hash([]byte(written))})
	if st != http.StatusConflict || !strings.Contains(string(b), "config_changed") {
		t.Fatalf("approval of another content: %d %s", st, b)
	}
	st, b = e.call("POST", "/v1/config/approve", api.ApproveConfigRequest{Hash: l.PendingConfig.Hash})
	if st != http.StatusOK {
		t.Fatalf("approval: %d %s", st, b)
	}
	l = api.AgentList{}
	if err := e.c.Do(context.Background(), "GET", "/v1/agents", nil, &l); err != nil {
		t.Fatal(err)
	}
	if ids, warning := e.agentsAndWarning(); !slices.Contains(ids, "added") || warning != "" || l.PendingConfig != nil {
		t.Fatalf("after approval: agents %v warning %q pending %+v", ids, warning, l.PendingConfig)
	}
}
