package idempotency_test

import (
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"jarvis/service/httpapi"
	"jarvis/service/idempotency"
	"jarvis/service/turn"
)

func TestSecondRequestGetsTheFirstOnesOutcome(t *testing.T) {
	var rs idempotency.Replays
	now := time.Now()
	first, ok := rs.Claim("g_1", "chat", "k", "hello", now)
	if !ok {
		t.Fatal("the first request with a key is not first")
	}
	again, ok := rs.Claim("g_1", "chat", "k", "hello", now)
	if ok || again != first {
		t.Fatal("the second request with a key got a slot of its own")
	}
	if _, ok := rs.Claim("g_2", "chat", "k", "hello", now); !ok {
		t.Fatal("a key is per session")
	}
	tt := &turn.Turn{ID: "t_1"}
	first.Settle(tt, nil)
	r := httptest.NewRequest("POST", "/v1/chat", nil)
	if err := again.Await(r, "hello"); err != nil || again.Turn != tt {
		t.Fatalf("replay: %v, turn %v", err, again.Turn)
	}
	var he *httpapi.Error
	if err := again.Await(r, "another message"); !errors.As(err, &he) || he.Code != "idempotency_key_reused" {
		t.Fatalf("a key reused for another message: %v", err)
	}
	// Past the window the key is forgotten: a new request with it is first again.
	if _, ok := rs.Claim("g_1", "chat", "k", "hello", now.Add(time.Hour)); !ok {
		t.Fatal("a key was remembered past its window")
	}
}
