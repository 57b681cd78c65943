package app

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"jarvis/app/audit"
)

// TestACPDeniedPermissionAndOwnCommandsThroughTheDesktop: through the real
// service and the desktop's runner, a permission the user denies at the
// gate's prompt is the user's answer (the agent is told and goes on, the
// turn succeeds), and the commands the agent ran itself have audit rows
// "ran inside the agent, not gated".
func TestACPDeniedPermissionAndOwnCommandsThroughTheDesktop(t *testing.T) {
	d, chat := acpDesktop(t, nil)
	reply := chat("abort")
	p := d.waitPrompt(t)
	if p.Tool != "agent_permission" {
		t.Fatalf("prompt %+v, want agent_permission", p)
	}
	if err := d.app.ResolvePrompt(p.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
	if got := <-reply; !strings.Contains(got, "echo: The user denied permission for: Run make clean") {
		t.Fatalf("after the denial the turn answered %q", got)
	}

	// exec: two commands the agent runs itself, and one through Jarvis's
	// terminal (echo, not on this desktop's allowlist: refused by the gate).
	<-chat("exec")
	var own []audit.Entry
	for deadline := time.Now().Add(15 * time.Second); len(own) < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		es, err := d.runner.Audit().List(context.Background(), audit.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		own = own[:0]
		for _, e := range es {
			if e.DecidedBy == audit.ByAgent {
				own = append(own, e)
			}
		}
	}
	if len(own) != 2 {
		t.Fatalf("rows of the agent's own commands %+v, want two", own)
	}
	for _, e := range own {
		if e.Reason != "ran inside the agent, not gated" || e.Class != "ungated" {
			t.Errorf("row %+v", e)
		}
	}
	if rep, err := d.runner.Audit().Verify(context.Background()); err != nil || !rep.OK {
		t.Fatalf("chain %+v %v", rep, err)
	}
}

// echoAgent is an A2A agent built with a2a-go's server: it answers "you
// said TEXT" and counts the messages it got.
type echoAgent struct{ got chan string }

func (e *echoAgent) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	text := rc.Message.Parts[0].(a2a.TextPart).Text
	e.got <- text
	return q.Write(ctx, a2a.NewMessageForTask(a2a.MessageRoleAgent, rc, a2a.TextPart{Text: "you said " + text}))
}

func (e *echoAgent) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	return q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil))
}

// TestA2AAgentThroughTheDesktopGate: a message to an A2A agent is prompted
// for at the desktop's gate (agents_message, source service) before it
// leaves; allowed, the agent answers; denied, it gets nothing. Both have
// their audit rows.
func TestA2AAgentThroughTheDesktopGate(t *testing.T) {
	agent := &echoAgent{got: make(chan string, 4)}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	mux.Handle("GET /.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(&a2a.AgentCard{Name: "Echo", URL: srv.URL + "/rpc",
		PreferredTransport: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0", Skills: []a2a.AgentSkill{}}))
	mux.Handle("POST /rpc", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(agent)))

	d := newRealDesktop(t, 60, "", fmt.Sprintf(`{"agentId":"remote","displayName":"Remote","type":"a2a","a2a":{"cardUrl":%q}}`, srv.URL))
	s, err := d.app.NewSession("remote")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.app.OpenSession(s.SessionID); err != nil {
		t.Fatal(err)
	}
	send := func(text string) <-chan string {
		out := make(chan string, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r, err := d.c.Chat(ctx, s.SessionID, text)
			if err != nil {
				out <- "error: " + err.Error()
				return
			}
			out <- r.Assistant.Parts[0].Text
		}()
		return out
	}
	for _, allow := range []bool{true, false} {
		reply := send(fmt.Sprintf("hello %v", allow))
		p := d.waitPrompt(t)
		if p.Tool != "agents_message" {
			t.Fatalf("prompt %+v, want agents_message", p)
		}
		select {
		case m := <-agent.got:
			t.Fatalf("the agent got %q before the gate decided", m)
		default:
		}
		decision := "once"
		if !allow {
			decision = "deny"
		}
		if err := d.app.ResolvePrompt(p.ID, decision, ""); err != nil {
			t.Fatal(err)
		}
		got := <-reply
		switch {
		case allow && got != "you said hello true":
			t.Fatalf("allowed: %q", got)
		case allow:
			<-agent.got // the allowed message
		case !strings.Contains(got, "not sent"):
			t.Fatalf("denied: %q", got)
		}
	}
	if len(agent.got) != 0 {
		t.Fatal("the agent got the denied message")
	}
	es, err := d.runner.Audit().List(context.Background(), audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var decisions []string
	for _, e := range es {
		if e.Tool == "agents_message" {
			decisions = append(decisions, string(e.Decision))
		}
	}
	if len(decisions) != 2 {
		t.Fatalf("agents_message rows %q, want one allowed and one denied", decisions)
	}
}
