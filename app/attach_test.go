package app_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/api"
	"jarvis/app"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
)

// TestSendWithImages: the window's images reach the model as image content
// parts through the real service; an image the service refuses comes back
// as a send:error with its code.
func TestSendWithImages(t *testing.T) {
	peer := testpeer.NewOpenAI()
	seen := make(chan []openai.ChatMessagePart, 4)
	peer.Respond = func(r openai.ChatCompletionRequest) testpeer.Script {
		seen <- r.Messages[len(r.Messages)-1].MultiContent
		return testpeer.Script{Deltas: []string{"a dot"}}
	}
	c := realService(t, peer, "")
	var mu sync.Mutex
	var sendErrors []app.SendError
	a, err := app.New(app.Options{Client: c, DataDir: t.TempDir(), Emit: func(name string, data any) {
		if se, ok := data.(app.SendError); ok && name == "send:error" {
			mu.Lock()
			sendErrors = append(sendErrors, se)
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Shutdown(a)
	s, err := c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: "j"})
	if err != nil {
		t.Fatal(err)
	}
	const img = "data:image/png;base64,iVBORw0KGgo="
	if err := a.SendWithImages(s.GeneralSessionID, "", nil); err == nil {
		t.Fatal("an empty message was sent")
	}
	if err := a.SendWithImages(s.GeneralSessionID, "what is it?", []string{img}); err != nil {
		t.Fatal(err)
	}
	select {
	case parts := <-seen:
		if len(parts) != 2 || parts[0].Text != "what is it?" || parts[1].ImageURL == nil || parts[1].ImageURL.URL != img {
			t.Fatalf("the model got %+v", parts)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the model got no request")
	}
	// Wait for the turn to end before the next message.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		tr, err := a.Reload(s.GeneralSessionID)
		if err == nil && len(tr.Messages) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not end: %+v %v", tr, err)
		}
	}
	if err := a.SendWithImages(s.GeneralSessionID, "and this?", []string{"data:image/bmp;base64,Qk0="}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(sendErrors)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no send:error for a refused image")
		}
	}
	if sendErrors[0].Code != "invalid_attachment" || sendErrors[0].SessionID != s.GeneralSessionID {
		t.Fatalf("send error %+v", sendErrors[0])
	}
}

// realService runs the service in httptest on the scripted upstream peer
// (extra: more fields of its provider entry) and returns a client of it.
func realService(t *testing.T, peer *testpeer.OpenAI, extra string) *api.Client {
	t.Helper()
	up := httptest.NewServer(peer)
	t.Cleanup(up.Close)
	if extra != "" {
		extra = "," + extra
	}
	cfg, err := config.Parse("c.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model"%s}}}`, up.URL+"/v1", extra)))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Config: cfg, Token: "tok-0123456789abcdef", Secrets: noSecrets{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(srv.Close)
	return api.NewClient(srv.URL, "tok-0123456789abcdef", nil)
}
