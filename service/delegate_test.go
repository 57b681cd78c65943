package service_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service/config"

	"jarvis/internal/testwait"
)

// setAgents replaces the env's config with one holding these agents
// (a JSON array) and extra top-level fields (",\"k\":v" or "").
func (e *env) setAgents(agents, extra string) {
	e.t.Helper()
	c, err := config.Parse("agents.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"test-model"}},"upstreamTimeoutSeconds":10%s,"agents":%s}`,
		e.upSrv.URL+"/v1", extra, agents)))
	if err != nil {
		e.t.Fatal(err)
	}
	e.cfg = c
	e.svc.SetConfig(c)
}

// agentSession is POST /v1/agents/{id}/session.
func (e *env) routeAgent(agentID string) (api.AgentSessionResponse, int) {
	e.t.Helper()
	var out api.AgentSessionResponse
	status := e.agDo("POST", "/v1/agents/"+agentID+"/session", nil, &out)
	return out, status
}

// agDo sends a request and decodes the answer; it returns the status.
func (e *env) agDo(method, path string, body, out any) int {
	e.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

func (e *env) agTranscript(sid string) []api.TranscriptMessage {
	e.t.Helper()
	var tr api.Transcript
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions/"+sid+"/messages", nil, &tr); err != nil {
		e.t.Fatal(err)
	}
	return tr.Messages
}

func (e *env) agSessions(agentID string) []api.SessionSummary {
	e.t.Helper()
	var l api.SessionList
	if err := e.c.Do(context.Background(), "GET", "/v1/sessions?agentId="+agentID, nil, &l); err != nil {
		e.t.Fatal(err)
	}
	return l.Sessions
}

// eventually polls cond for up to 10 s.
// agChat sends text in session sid and returns the turn's events.
func (e *env) agChat(sid, text string) []api.StreamEvent {
	e.t.Helper()
	var got collect
	approve := e.approveServiceTools(sid)
	if err := e.c.ChatStream(context.Background(), sid, text, func(ev api.StreamEvent) error { got.add(ev); approve(ev); return nil }); err != nil {
		e.t.Fatal(err)
	}
	return got.all()
}

// approveServiceTools answers, as a desktop whose gate allows them, the
// tool.requests of outbound service tools (agents_message to an agent out
// of the process, round_table): these tests are about what the tools do.
func (e *env) approveServiceTools(sid string) func(api.StreamEvent) {
	answer := e.answerTools(sid, func(api.ToolCall) api.ToolResult { return api.ToolResult{OK: true, Result: "approved"} })
	return func(ev api.StreamEvent) {
		if ev.Type == api.EventToolRequest && decode[api.ToolCall](e.t, ev.Data).Source == "service" {
			answer(ev)
		}
	}
}

// delegations returns the agents_message results of a turn's events.
func agDelegations(t *testing.T, evs []api.StreamEvent) []api.ToolResult {
	var out []api.ToolResult
	for _, ev := range evs {
		if ev.Type == api.EventToolResult {
			if r := decode[api.ToolResult](t, ev.Data); r.Name == "agents_message" {
				out = append(out, r)
			}
		}
	}
	return out
}

func delegationResult(t *testing.T, r api.ToolResult) api.AgentsMessageResult {
	t.Helper()
	if !r.OK {
		t.Fatalf("agents_message failed: %v", *r.Error)
	}
	return decode[api.AgentsMessageResult](t, json.RawMessage(r.Result))
}

// agRequests returns the upstream requests whose system prompt starts with prefix.
func agRequests(e *env, prefix string) []openai.ChatCompletionRequest {
	var out []openai.ChatCompletionRequest
	for _, r := range e.upstream.Requests() {
		if len(r.Messages) > 0 && strings.HasPrefix(r.Messages[0].Content, prefix) {
			out = append(out, r)
		}
	}
	return out
}

func agOffered(r openai.ChatCompletionRequest) []string {
	var out []string
	for _, tl := range r.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

const teamAgents = `[
 {"agentId":"general","displayName":"General","description":"Helps with anything."},
 {"agentId":"notes","displayName":"Notes","description":"keeps notes","systemPrompt":"You are Notes.","toolAllowlist":["read_file","list_dir","agents_message"],"agentAllowlist":["todo"]},
 {"agentId":"todo","displayName":"Todo","description":"manages tasks","toolAllowlist":["notify"]},
 {"agentId":"fsreader","displayName":"Reader","toolAllowlist":["*_dir","read_*","open_*","agents_*"],"capabilityAllowlist":["fs.read"]},
 {"agentId":"hidden","displayName":"Hidden","uiVisible":false},
 {"agentId":"blocked","displayName":"Blocked","toolAllowlist":["agents_message"],"agentDenylist":["g*"]}
]`

// Each agent's model gets its own system prompt sections and exactly the
// tools its lists allow.
func TestAgentPromptsAndOfferedTools(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	for _, id := range []string{"general", "notes", "todo", "fsreader", "blocked"} {
		s, _ := e.routeAgent(id)
		e.agChat(s.Session.SessionID, "hi")
	}
	one := func(prefix string) openai.ChatCompletionRequest {
		t.Helper()
		rs := agRequests(e, prefix)
		if len(rs) != 1 {
			t.Fatalf("%d requests with prompt %q", len(rs), prefix)
		}
		return rs[0]
	}
	cases := []struct {
		prefix string
		tools  []string // exact list; nil: checked below
		agents string   // the exact Available agents list, "" for none
	}{
		{"You are Notes.", []string{"list_dir", "read_file", "agents_message"}, "- todo: Todo - manages tasks\n"},
		{"You are Todo. manages tasks", []string{"notify"}, ""},
		// open_path needs os.launch too: every capability must be allowed.
		{"You are Reader. ", []string{"list_dir", "read_file"}, ""},
		{"You are Blocked. ", []string{"agents_message"}, "- notes: Notes - keeps notes\n- todo: Todo - manages tasks\n- fsreader: Reader\n"},
		{"You are General. Helps with anything.", nil, "- notes: Notes - keeps notes\n- todo: Todo - manages tasks\n- fsreader: Reader\n- blocked: Blocked\n"},
	}
	for _, tc := range cases {
		r := one(tc.prefix)
		prompt := r.Messages[0].Content
		got := agOffered(r)
		if tc.tools != nil && !slices.Equal(got, tc.tools) {
			t.Errorf("%s: offered %v, want %v", tc.prefix, got, tc.tools)
		}
		if tc.tools == nil {
			for _, w := range []string{"read_file", "run_command", "write_file", "agents_message"} {
				if !slices.Contains(got, w) {
					t.Errorf("general is not offered %s: %v", w, got)
				}
			}
		}
		// The prompt lists exactly the offered tools.
		for _, n := range got {
			if !strings.Contains(prompt, "\n- "+n+": ") {
				t.Errorf("%s: prompt does not list %s", tc.prefix, n)
			}
		}
		tools := strings.Index(prompt, "## Available tools\n")
		agents := strings.Index(prompt, "## Available agents\n")
		if tc.agents == "" {
			if agents >= 0 {
				t.Errorf("%s: unexpected agents section:\n%s", tc.prefix, prompt)
			}
			continue
		}
		if tools < 0 || agents < tools {
			t.Fatalf("%s: sections out of order:\n%s", tc.prefix, prompt)
		}
		want := "## Available agents\nAvailable agents you can delegate to:\n" + tc.agents + "\nUse agents_message"
		if !strings.Contains(prompt, want) {
			t.Errorf("%s: agents section:\n%s\nwant:\n%s", tc.prefix, prompt[agents:], want)
		}
	}
}

func TestDelegateSync(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	sid := e.session("j1")
	evs := e.agChat(sid, `ask notes [[tool agents_message {"agentId":"notes","content":"add milk"}]]`)
	ds := agDelegations(t, evs)
	if len(ds) != 1 {
		t.Fatalf("events %v", types(evs))
	}
	r := delegationResult(t, ds[0])
	if r.Mode != "sync" || r.Status != "complete" || r.AgentID != "notes" || r.Response != "You said: add milk" || !r.Created ||
		r.SessionID == "" || r.ResponseID == "" || r.ToolCallCount == nil || *r.ToolCallCount != 0 || r.DurationMs == nil || r.Truncated {
		t.Fatalf("result %+v", r)
	}
	if !strings.Contains(text(evs, api.EventFinal), `"response":"You said: add milk"`) {
		t.Fatalf("the caller's model did not get the reply: %q", text(evs, api.EventFinal))
	}
	if !slices.Contains(types(evs), api.EventStatus) {
		t.Fatalf("no delegation status on the caller's stream: %v", types(evs))
	}
	// The exchange is recorded in the target agent's session, as a normal turn.
	ss := e.agSessions("notes")
	if len(ss) != 1 || ss[0].SessionID != r.SessionID || ss[0].LastSnippet != "You said: add milk" {
		t.Fatalf("notes sessions %+v", ss)
	}
	tr := e.agTranscript(r.SessionID)
	if len(tr) != 2 || tr[0].Role != "user" || tr[0].Text != "add milk" || tr[1].Text != "You said: add milk" || tr[1].TurnID != r.ResponseID {
		t.Fatalf("notes transcript %+v", tr)
	}
	// Its stream has the turn's events.
	var got collect
	e.c.Stream(context.Background(), r.SessionID, "0", func(ev api.StreamEvent) error {
		got.add(ev)
		if ev.Type == api.EventFinal {
			return api.ErrStopStream
		}
		return nil
	})
	if ts := types(got.all()); ts[0] != api.EventUserMessage || ts[len(ts)-1] != api.EventFinal {
		t.Fatalf("notes stream %v", ts)
	}
	// latest-or-create reuses the session, with its history.
	evs = e.agChat(sid, `again [[tool agents_message {"agentId":"notes","content":"and eggs","session":"latest-or-create"}]]`)
	r2 := delegationResult(t, agDelegations(t, evs)[0])
	if r2.SessionID != r.SessionID || r2.Created || r2.Response != "You said: and eggs" {
		t.Fatalf("second result %+v", r2)
	}
	notesReqs := agRequests(e, "You are Notes.")
	if last := notesReqs[len(notesReqs)-1]; len(last.Messages) != 4 {
		t.Fatalf("notes' second turn sent %d messages, want system+2 exchanges", len(last.Messages))
	}
}

// The delegated agent's tool calls are counted and timed.
func TestDelegateReportsToolCalls(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	todo, _ := e.routeAgent("todo")
	tsid := todo.Session.SessionID
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan struct{})
	delegatedBy := make(chan []string, 1)
	go e.c.Stream(ctx, tsid, "0", func(ev api.StreamEvent) error {
		select {
		case <-ready:
		default:
			close(ready)
		}
		e.answerTools(tsid, func(c api.ToolCall) api.ToolResult {
			delegatedBy <- c.DelegatedBy
			return api.ToolResult{OK: true, Result: "shown"}
		})(ev)
		return nil
	})
	e.agChat(tsid, "warm up") // the follower is connected once it saw this
	<-ready
	evs := e.agChat(e.session("j1"), `[[tool agents_message {"agentId":"todo","content":"[[tool notify]]","session":"latest"}]]`)
	r := delegationResult(t, agDelegations(t, evs)[0])
	if r.Status != "complete" || r.SessionID != tsid || r.Created || *r.ToolCallCount != 1 || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "notify" || r.Response != "Tool results: shown" {
		t.Fatalf("result %+v", r)
	}
	// The call ran in the session the user has open with todo, but another
	// agent started its turn: the tool.request says so, so that the gate
	// does not apply the user's "allow for this session" grants to it.
	if by := <-delegatedBy; len(by) != 1 || by[0] != "general" {
		t.Fatalf("the delegated turn's tool.request has delegated_by %q, want the calling agent", by)
	}
}

func TestDelegateAsync(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	start := time.Now()
	evs := e.agChat(e.session("j1"), `[[tool agents_message {"agentId":"notes","content":"[[slow 100]] [[deltas 4]]","mode":"async"}]]`)
	r := delegationResult(t, agDelegations(t, evs)[0])
	if r.Mode != "async" || r.Status != "started" || r.ResponseID == "" || r.SessionID == "" || !r.Created || r.Response != "" {
		t.Fatalf("result %+v", r)
	}
	if d := time.Since(start); d > 400*time.Millisecond {
		t.Fatalf("async delegation took %v: it waited for the reply", d)
	}
	testwait.Until(t, "the async reply in the notes session", 10*time.Second, func() bool {
		tr := e.agTranscript(r.SessionID)
		return len(tr) == 2 && tr[1].Text == "w0 w1 w2 w3 " && tr[1].TurnID == r.ResponseID
	})
}

func TestDelegateTimeoutLeavesTheRunGoing(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	evs := e.agChat(e.session("j1"), `[[tool agents_message {"agentId":"notes","content":"[[slow 150]] [[deltas 5]]","timeout":0.3}]]`)
	r := delegationResult(t, agDelegations(t, evs)[0])
	if r.Status != "timeout" || r.TimeoutSeconds != 0.3 || !strings.Contains(r.Message, r.SessionID) || r.ResponseID == "" || r.Response != "" {
		t.Fatalf("result %+v", r)
	}
	testwait.Until(t, "the run to finish in its session", 10*time.Second, func() bool {
		tr := e.agTranscript(r.SessionID)
		return len(tr) == 2 && tr[1].Text == "w0 w1 w2 w3 w4 "
	})
}

// A delegation to a session that is answering waits for it (sync).
func TestDelegateWaitsForBusySession(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	notes, _ := e.routeAgent("notes")
	nsid := notes.Session.SessionID
	busy := make(chan struct{})
	go func() {
		defer close(busy)
		e.c.Chat(context.Background(), nsid, "[[slow 60]] [[deltas 5]]")
	}()
	testwait.Until(t, "the busy turn to start", 10*time.Second, func() bool { return len(agRequests(e, "You are Notes.")) == 1 })
	evs := e.agChat(e.session("j1"), fmt.Sprintf(`[[tool agents_message {"agentId":"notes","content":"after you","session":%q}]]`, nsid))
	r := delegationResult(t, agDelegations(t, evs)[0])
	if r.Status != "complete" || r.Response != "You said: after you" || r.SessionID != nsid {
		t.Fatalf("result %+v", r)
	}
	<-busy
	tr := e.agTranscript(nsid)
	if len(tr) != 4 || tr[2].Text != "after you" {
		t.Fatalf("transcript %+v", tr)
	}
}

// Session strategies and visibility rules are enforced with clear errors.
func TestDelegateRefusals(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	other, _ := e.routeAgent("todo")
	cases := []struct {
		name, caller, args, want string
	}{
		{"latest without a session", "general", `{"agentId":"notes","content":"x","session":"latest"}`, `agent "notes" has no session yet`},
		{"session of another agent", "general", fmt.Sprintf(`{"agentId":"notes","content":"x","session":%q}`, other.Session.SessionID), `belongs to agent "todo"`},
		{"unknown session", "general", `{"agentId":"notes","content":"x","session":"g_nope"}`, `no session "g_nope"`},
		{"hidden agent", "general", `{"agentId":"hidden","content":"x"}`, `agent "hidden" is not available to agent "general"`},
		{"unknown agent", "general", `{"agentId":"ghost","content":"x"}`, `agent "ghost" is not available`},
		{"denylisted agent", "blocked", `{"agentId":"general","content":"x"}`, `agent "general" is not available to agent "blocked" (available: notes, todo, fsreader)`},
		{"not allowlisted", "notes", `{"agentId":"fsreader","content":"x"}`, `(available: todo)`},
		{"missing content", "general", `{"agentId":"notes"}`, "content is required"},
		{"bad mode", "general", `{"agentId":"notes","content":"x","mode":"later"}`, `mode must be "sync" or "async"`},
		{"bad timeout", "general", `{"agentId":"notes","content":"x","timeout":-1}`, "timeout must be a positive"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := e.routeAgent(tc.caller)
			ds := agDelegations(t, e.agChat(s.Session.SessionID, "[[tool agents_message "+tc.args+"]]"))
			if len(ds) != 1 || ds[0].OK || !strings.Contains(*ds[0].Error, tc.want) {
				t.Fatalf("results %+v, want an error with %q", ds, tc.want)
			}
		})
	}
	// The only notes session is the one the "not allowlisted" case called from.
	if len(e.agSessions("notes")) != 1 || len(e.agSessions("hidden")) != 0 || len(e.agSessions("fsreader")) != 0 {
		t.Fatal("a refused delegation created a session")
	}
	// An agent without agents_message in scope cannot call it at all.
	s, _ := e.routeAgent("todo")
	ds := agDelegations(t, e.agChat(s.Session.SessionID, `[[tool agents_message {"agentId":"notes","content":"x"}]]`))
	if len(ds) != 1 || ds[0].OK || !strings.Contains(*ds[0].Error, "not allowed") {
		t.Fatalf("out-of-scope call %+v", ds)
	}
}

// chainScript makes each agent whose prompt starts with "You are <id>."
// delegate to next[id] (when set) with a sync agents_message.
func chainScript(next map[string]string) func(openai.ChatCompletionRequest) testpeer.Script {
	return func(req openai.ChatCompletionRequest) testpeer.Script {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == openai.ChatMessageRoleUser {
			for from, to := range next {
				if strings.HasPrefix(req.Messages[0].Content, "You are "+from+".") {
					return testpeer.Script{Calls: []testpeer.Call{{ID: "call_" + to, Name: "agents_message",
						Args: fmt.Sprintf(`{"agentId":%q,"content":"from %s"}`, to, from)}}}
				}
			}
		}
		return testpeer.Directives(req)
	}
}

func TestDelegationCycleIsRefused(t *testing.T) {
	e := newEnv(t)
	e.setAgents(`[{"agentId":"a","systemPrompt":"You are a."},{"agentId":"b","systemPrompt":"You are b."}]`, "")
	e.upstream.Respond = chainScript(map[string]string{"a": "b", "b": "a"})
	s, _ := e.routeAgent("a")
	evs := e.agChat(s.Session.SessionID, "start")
	r := delegationResult(t, agDelegations(t, evs)[0])
	// b's call back to a was refused; b told a so.
	if r.Status != "complete" || !strings.Contains(r.Response, "delegation cycle refused: a → b → a") {
		t.Fatalf("result %+v", r)
	}
	if len(e.agSessions("a")) != 1 {
		t.Fatal("the cycle reached a again")
	}
}

func TestDelegationDepthLimit(t *testing.T) {
	e := newEnv(t)
	var agents []string
	next := map[string]string{}
	for i := 1; i <= 5; i++ {
		agents = append(agents, fmt.Sprintf(`{"agentId":"a%d","systemPrompt":"You are a%d."}`, i, i))
		next[fmt.Sprintf("a%d", i)] = fmt.Sprintf("a%d", i+1)
	}
	e.setAgents("["+strings.Join(agents, ",")+"]", `,"maxDelegationDepth":2`)
	e.upstream.Respond = chainScript(next)
	s, _ := e.routeAgent("a1")
	evs := e.agChat(s.Session.SessionID, "start")
	if f := text(evs, api.EventFinal); !strings.Contains(f, "delegation depth limit reached: a1 → a2 → a3 already has 2 hop(s) and maxDelegationDepth is 2") {
		t.Fatalf("final %q", f)
	}
	if len(agRequests(e, "You are a3.")) == 0 || len(agRequests(e, "You are a4.")) != 0 {
		t.Fatal("the chain went past the limit")
	}
}

func TestDelegateToSeveralAgentsAtOnce(t *testing.T) {
	e := newEnv(t)
	e.setAgents(teamAgents, "")
	start := time.Now()
	evs := e.agChat(e.session("j1"), `[[tool agents_message {"agentId":"notes","content":"[[slow 100]] [[deltas 3]]"}]] [[tool agents_message {"agentId":"todo","content":"[[slow 100]] [[deltas 3]]"}]]`)
	ds := agDelegations(t, evs)
	if len(ds) != 2 {
		t.Fatalf("events %v", types(evs))
	}
	got := map[string]string{}
	for _, d := range ds {
		r := delegationResult(t, d)
		got[r.AgentID] = r.Response
	}
	if got["notes"] != "w0 w1 w2 " || got["todo"] != "w0 w1 w2 " {
		t.Fatalf("replies %v", got)
	}
	// Each reply takes ≥ 400 ms (4 chunks × 100 ms); run one after the other they would take ≥ 800 ms.
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Logf("parallel delegation took %v", d)
	}
}
