package service_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"jarvis/api"
)

// A turn's start is stored while its model call runs. Messages sent to one
// session at the same moment still start exactly one turn; the others are
// refused and leave nothing behind; and the next turn's model sees the
// whole conversation, the first answer included.
func TestSimultaneousMessagesStartOneTurn(t *testing.T) {
	e := newEnv(t)
	sid := e.session("race")
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ok, refused int
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.c.Chat(context.Background(), sid, "[[slow 2]] hello")
			var se *api.StatusError
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.As(err, &se) && se.Status == 409 && se.Err.Code == "turn_in_progress":
				refused++
			default:
				t.Errorf("chat: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok < 1 || ok+refused != n {
		t.Fatalf("%d answered, %d refused of %d", ok, refused, n)
	}
	if _, err := e.c.Chat(context.Background(), sid, "second"); err != nil {
		t.Fatal(err)
	}
	var page api.Transcript
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &page); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range page.Messages {
		roles = append(roles, m.Role)
	}
	if want := strings.Repeat("user assistant ", ok+1); strings.Join(roles, " ")+" " != want {
		t.Fatalf("stored roles %v, want %q", roles, want)
	}
	reqs := e.upstream.Requests()
	last := reqs[len(reqs)-1].Messages
	var convo []string
	for _, m := range last[1:] { // after the system prompt
		convo = append(convo, m.Role+": "+m.Content)
	}
	got := strings.Join(convo, " | ")
	if !strings.HasSuffix(got, "assistant: You said: hello | user: second") {
		t.Fatalf("the second turn's model saw %q", got)
	}
}
