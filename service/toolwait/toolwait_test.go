package toolwait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/httpapi"
	"jarvis/service/store"
	"jarvis/service/toolwait"
	"jarvis/service/turn/turntest"
)

// A pending call is settled once: by the desktop's result or by the
// service (timeout, cancel), whichever claims it first; the other is refused.
func TestACallIsSettledOnce(t *testing.T) {
	ctx := context.Background()
	env, rec := turntest.Env(t, t.TempDir(), config.Defaults())
	w := toolwait.New(env)
	tt, sess := turntest.Begin(t, env, "general", "hi")
	ch := make(chan toolwait.Result, 2)
	request := func(id string, idx int) *toolwait.Wait {
		return w.Request(tt, store.ToolCall{ID: id, SessionID: sess.ID, TurnID: tt.ID, Name: "read_file", Arguments: `{}`, Risk: "safe"},
			api.ToolCall{ID: id, Name: "read_file", TurnID: tt.ID}, idx, ch)
	}
	a, b := request("tc_a", 0), request("tc_b", 1)
	if got := rec.Lines("name"); len(got) != 2 || got[0] != "tool.request read_file" {
		t.Fatalf("published %q", got)
	}

	// The desktop answers a; the service's expiry of a comes too late.
	if err := w.Deliver(ctx, sess.ID, api.ToolResult{ID: "tc_a", OK: true, Result: "text"}); err != nil {
		t.Fatal(err)
	}
	if r := <-ch; r.Idx != 0 || !r.R.OK || r.R.Source != "desktop" {
		t.Fatalf("delivered %+v", r)
	}
	if _, ok := w.Expire(a, "timeout", toolwait.TimeoutMessage(time.Second)); ok {
		t.Fatal("a call the desktop answered was expired")
	}
	// The service expires b; the desktop's result comes too late.
	r, ok := w.Expire(b, "cancelled", toolwait.CancelledMessage)
	if !ok || r.OK || r.Source != "cancelled" {
		t.Fatalf("expired %+v %v", r, ok)
	}
	var he *httpapi.Error
	if err := w.Deliver(ctx, sess.ID, api.ToolResult{ID: "tc_b", OK: true}); !errors.As(err, &he) || he.Code != "tool_result_duplicate" {
		t.Fatalf("late result: %v", err)
	}
	if err := w.Deliver(ctx, sess.ID, api.ToolResult{ID: "tc_none", OK: true}); !errors.As(err, &he) || he.Code != "tool_call_not_found" {
		t.Fatalf("unknown call: %v", err)
	}
	if err := w.Deliver(ctx, "g_other", api.ToolResult{ID: "tc_a", OK: true}); err == nil {
		t.Fatal("another session's call was answered")
	}
}
