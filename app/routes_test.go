package app

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"jarvis/api"
)

// The attach form shows the service's own validation and conflict messages.
func TestAttachSessionMessages(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		body    string
		id      string
		wantErr string
	}{
		{name: "created", status: 201, body: `{"ok":true,"result":{"sessionId":"EXT-1","agentId":"ext","createdAt":"x","updatedAt":"x"}}`, id: "EXT-1"},
		{name: "validation", status: 400, body: `{"error":{"code":"invalid_session_id","message":"sessionId may only contain letters, digits, '-' and '_'","details":{}}}`, id: "bad id", wantErr: "sessionId may only contain"},
		{name: "conflict", status: 409, body: `{"error":{"code":"conflict","message":"session \"EXT-1\" belongs to agent \"general\"","details":{}}}`, id: "EXT-1", wantErr: `belongs to agent "general"`},
		{name: "empty id", id: "  ", wantErr: "enter the session ID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/plugins/sessions/operations/create" || r.Method != http.MethodPost {
					http.NotFound(w, r)
					return
				}
				b := make([]byte, 512)
				n, _ := r.Body.Read(b)
				got = string(b[:n])
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			a, _ := New(Options{Client: api.NewClient(srv.URL, "tok", nil), Emit: func(string, any) {}})
			s, err := a.AttachSession("ext", tc.id)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || s.SessionID != "EXT-1" || s.AgentID != "ext" {
				t.Fatalf("got %+v, %v", s, err)
			}
			if !strings.Contains(got, `"agentId":"ext"`) || !strings.Contains(got, `"sessionId":"EXT-1"`) {
				t.Fatalf("request body %s", got)
			}
		})
	}
}

// Without the list routes (an older service) the app still works.
func TestFallbacksWhenRoutesAreMissing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/sessions" && r.Method == http.MethodPost {
			w.Write([]byte(`{"general_session_id":"g_9","created":true}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"code":"not_found","message":"no route"}}`))
	}))
	defer srv.Close()
	a, _ := New(Options{Client: api.NewClient(srv.URL, "tok", nil), Emit: func(string, any) {}})
	ags, err := a.Agents()
	if err != nil || len(ags) != 1 || ags[0].AgentID != "general" {
		t.Fatalf("agents %+v, %v", ags, err)
	}
	if _, err := a.NewSession("general"); err != nil {
		t.Fatal(err)
	}
	ss, err := a.Sessions("")
	if err != nil || len(ss) != 1 || ss[0].SessionID != "g_9" {
		t.Fatalf("sessions %+v, %v", ss, err)
	}
	tr, err := a.Reload("g_9")
	if err != nil || !tr.Unavailable {
		t.Fatalf("transcript %+v, %v", tr, err)
	}
}

// The service's config warning (its config file was deleted at run time)
// reaches the window through Info.
func TestInfoCarriesTheServiceConfigWarning(t *testing.T) {
	const warning = "config file /x/config.json is missing; the config loaded before is kept until the file is back"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/health":
			w.Write([]byte(`{"healthy":true,"version":"t"}`))
		case "/v1/agents":
			w.Write([]byte(`{"agents":[],"warning":"` + warning + `"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	a, _ := New(Options{Client: api.NewClient(srv.URL, "tok", nil), Emit: func(string, any) {}})
	if in := a.Info(); in.Warning != warning || in.Error != "" {
		t.Fatalf("Info %+v", in)
	}
}

// A notification names the agent of the session that asked for it.
func TestSenderOfNamesTheSessionsAgent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/sessions/g_1":
			w.Write([]byte(`{"sessionId":"g_1","agentId":"reading-list"}`))
		case "/v1/sessions/g_2":
			w.Write([]byte(`{"sessionId":"g_2","agentId":"gone"}`))
		case "/v1/agents":
			w.Write([]byte(`{"agents":[{"agentId":"reading-list","displayName":"Reading List"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	a, _ := New(Options{Client: api.NewClient(srv.URL, "tok", nil), Emit: func(string, any) {}})
	for sid, want := range map[string]string{"g_1": "Reading List", "g_2": "gone", "g_3": ""} {
		if got := a.senderOf(sid); got != want {
			t.Errorf("senderOf(%s) = %q, want %q", sid, got, want)
		}
	}
}
