package app_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/app"
	"jarvis/internal/testpeer"
)

type noSecrets struct{}

func (noSecrets) Get(string) (string, error) { return "", errors.New("none") }

// The header's meter and Compact button, against the real service and the
// scripted upstream: the context use is reported, and compacting reports
// what it summarized.
func TestSessionContextAndCompact(t *testing.T) {
	c := realService(t, testpeer.NewOpenAI(), `"contextWindow":32768`)
	a, err := app.New(app.Options{Client: c, Emit: func(string, any) {}, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: "j"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 4; i++ {
		if _, err := c.Chat(context.Background(), s.GeneralSessionID, fmt.Sprintf("message %d %s", i, strings.Repeat("x", 500))); err != nil {
			t.Fatal(err)
		}
	}
	info, err := a.SessionContext(s.GeneralSessionID)
	if err != nil || info == nil || info.Window != 32768 || info.Source != "config" || info.Tokens <= 0 || info.Compactions != 0 {
		t.Fatalf("context %+v, %v", info, err)
	}
	ev, err := a.CompactSession(s.GeneralSessionID, "keep the numbers")
	if err != nil || ev.Reason != "manual" || ev.Messages != 6 {
		t.Fatalf("compact %+v, %v", ev, err)
	}
	if info, _ = a.SessionContext(s.GeneralSessionID); info.Compactions != 1 || info.Tokens != ev.TokensAfter {
		t.Fatalf("context after compaction %+v", info)
	}
	// Reading the transcript again brings the compaction for its line.
	tr, err := a.Reload(s.GeneralSessionID)
	if err != nil || len(tr.Compactions) != 1 || tr.Compactions[0].UptoMessageID != ev.UptoMessageID || len(tr.Messages) != 8 {
		t.Fatalf("transcript %d messages, compactions %+v, %v", len(tr.Messages), tr.Compactions, err)
	}
	if _, err := a.CompactSession("nope", ""); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("unknown session: %v", err)
	}
}
