package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCompose(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		got := Compose("hello world", n)
		if len(got) != n {
			t.Fatalf("n=%d: %d replies", n, len(got))
		}
		if !strings.Contains(got[0], "> hello world") {
			t.Fatalf("first reply %q does not quote the message", got[0])
		}
	}
	if got := Compose("ab`c", 3)[1]; !strings.Contains(got, "reversed: `c'ba`") {
		t.Fatalf("facts %q", got)
	}
}

// The agent answers 202 at once and posts its replies, signed, in order.
func TestAgentRepliesThroughCallback(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	var ids []string
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
		m := hmac.New(sha256.New, []byte("0123456789abcdef0123456789abcdef"))
		m.Write([]byte(id + "." + ts + "." + string(b)))
		if r.Header.Get("webhook-signature") != "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)) || r.URL.Query().Get("token") != "T" {
			t.Errorf("bad signature or token: %v", r.Header)
		}
		mu.Lock()
		bodies, ids = append(bodies, string(b)), append(ids, id)
		mu.Unlock()
	}))
	defer cb.Close()
	a := &Agent{Delay: 10 * time.Millisecond, Replies: 3, Secret: secret}
	in := `{"sessionId":"S-1","agentId":"echo","callbackUrl":"` + cb.URL + `/external/sessions/S-1/messages?token=T","message":{"type":"user","text":"hi there","createdAt":"2025-12-12T00:00:00.000Z"}}`
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", bytes.NewBufferString(in)))
	if rec.Code != http.StatusAccepted {
		t.Fatalf("status %d", rec.Code)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a.Wait(ctx)
	mu.Lock()
	defer mu.Unlock()
	if want := Compose("hi there", 3); strings.Join(bodies, "|") != strings.Join(want, "|") {
		t.Fatalf("replies %q, want %q", bodies, want)
	}
	if ids[0] == ids[1] || ids[0] == "" {
		t.Fatalf("webhook ids %q", ids)
	}
}

func TestAgentRejectsBadInput(t *testing.T) {
	a := &Agent{}
	for _, body := range []string{"not json", `{"callbackUrl":"file:///etc/passwd"}`} {
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("%q: status %d", body, rec.Code)
		}
	}
}
