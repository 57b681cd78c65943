package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"jarvis/app/audit"
)

// TestServiceToolsAreGatedAndAudited: the service's own tools get rows in
// the desktop's audit chain. memory_write stays in the process: it runs at
// once and is recorded as decided by the service. agents_message to an
// external agent sends the conversation out: it prompts (showing where the
// text would go), and denied, the agent receives nothing.
func TestServiceToolsAreGatedAndAudited(t *testing.T) {
	var got atomic.Int32
	ext := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(ext.Close)
	d := newRealDesktop(t, 60, "", fmt.Sprintf(`{"agentId":"ext","displayName":"Ext","type":"external","external":{"inputUrl":%q}}`, ext.URL))
	s, err := d.app.NewSession("general")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	if err := d.app.Send(s.SessionID, `[[tool memory_write {"target":"daily","content":"met Ana"}]] [[tool agents_message {"agentId":"ext","content":"everything I know","mode":"async"}]]`); err != nil {
		t.Fatal(err)
	}
	p := d.waitPrompt(t)
	if p.Tool != "agents_message" || !strings.Contains(p.Target, "external agent") || !strings.Contains(p.Target, ext.URL) {
		t.Fatalf("prompt %+v, want agents_message with its target", p)
	}
	if err := d.app.ResolvePrompt(p.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	rows := func() map[string]audit.Entry {
		es, err := d.runner.Audit().List(context.Background(), audit.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]audit.Entry{}
		for _, e := range es {
			m[e.Tool] = e
		}
		return m
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(rows()) < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	m := rows()
	mw, am := m["memory_write"], m["agents_message"]
	var args map[string]string
	json.Unmarshal(mw.Arguments, &args)
	if mw.Decision != audit.Allowed || mw.DecidedBy != audit.ByService || args["content"] != "met Ana" || !strings.Contains(mw.Result, "memory/") {
		t.Fatalf("memory_write row %+v", mw)
	}
	if am.Decision != audit.Denied || am.DecidedBy != audit.ByUser || am.Class != "risky" {
		t.Fatalf("agents_message row %+v", am)
	}
	if got.Load() != 0 {
		t.Fatal("the external agent received the denied message")
	}
	if rep, err := d.runner.Audit().Verify(context.Background()); err != nil || !rep.OK {
		t.Fatalf("chain %+v %v", rep, err)
	}
}
