package service

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service/store"

	"jarvis/internal/testwait"
)

// When the store refuses a turn's start (its own check finds a running turn
// the service did not know of), the turn is abandoned: the client gets 409,
// and nothing of it is stored or published, although its model call had
// already begun.
func TestRefusedStartLeavesNothing(t *testing.T) {
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	s, srv := serve(t, fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}}}`, up.URL+"/v1"), "tok")
	ctx := context.Background()
	sess, err := s.st.CreateSession(ctx, store.Session{ID: "g_ghost", AgentID: "general"})
	if err != nil {
		t.Fatal(err)
	}
	ghost := store.Message{SessionID: sess.ID, Role: "user", Content: "left running by someone else"}
	if _, err := s.hub.PublishWith(ctx, sess.ID, api.EventUserMessage, api.TextEvent{Text: ghost.Content}, s.st.StartTurn("t_ghost", "", &ghost, "")); err != nil {
		t.Fatal(err)
	}
	c := api.NewClient(srv.URL, "tok", nil)
	_, err = c.Chat(ctx, sess.ID, "hello")
	streamErr := c.ChatStream(ctx, sess.ID, "hello again", func(api.StreamEvent) error { return nil })
	for _, err := range []error{err, streamErr} {
		var se *api.StatusError
		if !errors.As(err, &se) || se.Status != 409 || se.Err.Code != "turn_in_progress" {
			t.Fatalf("want 409 turn_in_progress, got %v", err)
		}
	}
	msgs, err := s.st.Messages(ctx, sess.ID)
	if err != nil || len(msgs) != 1 || msgs[0].Content != ghost.Content {
		t.Fatalf("messages %+v %v", msgs, err)
	}
	evs, err := s.st.EventsAfter(ctx, sess.ID, 0, 100)
	if err != nil || len(evs) != 1 {
		t.Fatalf("events %+v %v", evs, err)
	}
	// The streamed request was answered at once; its turn lets go of the
	// session when its model call ends.
	testwait.Until(t, "the refused turn to let go of the session", 10*time.Second, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.turns[sess.ID] == nil
	})
	if msgs, _ := s.st.Messages(ctx, sess.ID); len(msgs) != 1 {
		t.Fatalf("messages after the model calls ended: %+v", msgs)
	}
}
