package service_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
)

// TestToolResultSecretRedactedBeforeStorage: a tool result that holds a
// stored secret (here the model provider's key) is redacted before the
// model sees it and before it is stored, and the tool.result event says
// it was: the same view for the user, the model and the disk.
func TestToolResultSecretRedactedBeforeStorage(t *testing.T) {
	const key = "oc-SECRET-9d2f7a1c3e5b"
	e := &env{t: t, dir: t.TempDir(), upstream: testpeer.NewOpenAI()}
	e.upSrv = httptest.NewServer(e.upstream)
	t.Cleanup(e.upSrv.Close)
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model","apiKeyRef":"oc"}}}`, e.upSrv.URL+"/v1")))
	if err != nil {
		t.Fatal(err)
	}
	e.cfg = cfg
	e.start(func(_ *env, o *service.Options) { o.Secrets = testpeer.NewSecrets(map[string]string{"oc": key}) })
	sid := e.session("j1")
	var events []string
	err = e.c.ChatStream(context.Background(), sid, `read it [[tool read_file {"path":"secrets.json"}]]`, func(ev api.StreamEvent) error {
		events = append(events, string(ev.Data))
		if ev.Type == api.EventToolRequest {
			tc := decode[api.ToolCall](t, ev.Data)
			return e.c.PostToolResult(context.Background(), sid, api.ToolResult{ID: tc.ID, OK: true, Result: `{"openai":"` + key + `"}`})
		}
		if ev.Type == api.EventToolResult {
			var m map[string]any
			if err := json.Unmarshal(ev.Data, &m); err != nil || m["redacted"] != true {
				t.Errorf("the tool.result event does not say the result was redacted: %s", ev.Data)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs, _ := json.Marshal(e.upstream.Requests())
	if strings.Contains(string(reqs), key) {
		t.Errorf("the model was sent the secret in a tool result")
	}
	if !strings.Contains(string(reqs), "[redacted]") {
		t.Errorf("the model was not told that something was redacted")
	}
	if strings.Contains(strings.Join(events, "\n"), key) {
		t.Errorf("an event holds the secret")
	}
	e.svc.Close()
	filepath.WalkDir(e.dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), key) {
				t.Errorf("%s holds the secret", p)
			}
		}
		return nil
	})
}
