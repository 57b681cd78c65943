package proxyrt_test

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/service/callback"
	"jarvis/service/config"
	"jarvis/service/proxyrt"
	"jarvis/service/redact"
	"jarvis/service/store"
	"jarvis/service/turn"
	"jarvis/service/turn/turntest"
	"jarvis/service/webhook"
)

type mapSecrets map[string]string

func (m mapSecrets) Get(ref string) (string, error) {
	if v, ok := m[ref]; ok {
		return v, nil
	}
	return "", store.ErrNotFound
}

// A signed callback's webhook-id is remembered in the store: replaying it
// to the runtime of a restarted service is still acknowledged as a
// duplicate and not applied again.
func TestSignedCallbackReplayRefusedAfterRestart(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	cfg, err := config.Parse("test.json", []byte(`{"agents":[
		{"agentId":"px","displayName":"Px","type":"proxy","proxy":{"url":"https://agent.example.com/","async":true,"routeToUser":true,"webhookSecretRef":"hook"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(t.TempDir(), "jarvis.db")
	ctx := context.Background()
	// start is one life of the service: a store on the same file and a new runtime.
	start := func() http.Handler {
		st, err := store.Open(ctx, dbPath, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		env := turn.Env{Store: st, Publisher: &turntest.Recorder{}, Config: func() *config.Config { return cfg }, Log: slog.New(slog.DiscardHandler),
			Now: time.Now, Secrets: mapSecrets{"hook": "whsec_" + base64.StdEncoding.EncodeToString(key)}}
		rt, err := proxyrt.New(ctx, env, &callback.Base{}, &redact.Set{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateSession(ctx, store.Session{ID: "s1", AgentID: "px"}); err != nil && !errors.Is(err, store.ErrConflict) { // made in the first life
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		for _, r := range rt.Routes() {
			h := r.Handle
			mux.HandleFunc(r.Pattern, func(w http.ResponseWriter, r *http.Request) {
				if err := h(w, r); err != nil {
					http.Error(w, err.Error(), http.StatusTeapot)
				}
			})
		}
		return mux
	}
	body := `{"messageId":"m1","sessionInfo":{"status":"idle","output":{"type":"text","content":"signed answer"}}}`
	post := func(h http.Handler) (int, string) {
		req := httptest.NewRequest(http.MethodPost, "/proxy/agents/px/sessions/s1/callback", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		webhook.SetHeaders(req.Header, key, "msg_1", []byte(body), time.Now())
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Code, w.Body.String()
	}
	first := start()
	if code, b := post(first); code != http.StatusAccepted || strings.Contains(b, "duplicate") {
		t.Fatalf("first delivery: %d %s", code, b)
	}
	if code, b := post(first); code != http.StatusOK || !strings.Contains(b, `"duplicate":true`) {
		t.Fatalf("replay to the same runtime: %d %s", code, b)
	}
	restarted := start()
	if code, b := post(restarted); code != http.StatusOK || !strings.Contains(b, `"duplicate":true`) {
		t.Fatalf("replay after a restart: %d %s", code, b)
	}
}
