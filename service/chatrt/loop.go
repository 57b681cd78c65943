package chatrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/llm"
	"jarvis/service/prompt"
	"jarvis/service/provenance"
	"jarvis/service/store"
	"jarvis/service/toolwait"
	"jarvis/service/turn"
	"jarvis/tools"
)

// deltaRelay publishes a model step's text deltas. While a client follows
// the session live, the first delta waits until it is stored (a model
// streaming as fast as it can would otherwise fill the hub's queue before the
// first commit, and the first event, what a user feels, would wait for a
// large batch), and later deltas are published as they come unless the hub
// still has events queued, in which case they are appended to a pending one:
// at a model's usual pace every delta is its own event, and a flood is
// relayed in fewer, larger ones with the same text. While nobody follows (a
// non-streamed request), the step's text is stored as one event at its end;
// a client that starts following mid-step gets the pending text at once.
type deltaRelay struct {
	rt      *Runtime
	t       *turn.Turn
	started bool
	pending strings.Builder
}

// maxCoalesced bounds the text one coalesced delta carries.
const maxCoalesced = 4 << 10

func (rt *Runtime) newDeltaRelay(t *turn.Turn) *deltaRelay { return &deltaRelay{rt: rt, t: t} }

func (r *deltaRelay) add(text string) {
	if !r.t.Streamed && !r.rt.env.Events.Following(r.t.SessionID) {
		r.pending.WriteString(text)
		if r.pending.Len() >= maxCoalesced {
			r.flush()
		}
		return
	}
	if !r.started {
		if !r.ready() {
			return
		}
		r.started = true
		r.pending.WriteString(text)
		ev := api.TextEvent{Text: r.pending.String(), TurnID: r.t.ID}
		r.pending.Reset()
		if _, err := r.rt.env.Events.PublishWait(context.Background(), r.t.SessionID, api.EventDelta, ev); err != nil {
			r.rt.env.Log.Error("publish event", "session", r.t.SessionID, "type", api.EventDelta, "err", err)
		}
		return
	}
	r.pending.WriteString(text)
	if r.rt.env.Events.Queued() == 0 || r.pending.Len() >= maxCoalesced {
		r.flush()
	}
}

// ready waits until the turn's start is stored: its events follow it. When
// the start could not be stored, nothing of the turn is published.
func (r *deltaRelay) ready() bool {
	if _, err := r.t.Stored(); err != nil {
		r.pending.Reset()
		return false
	}
	return true
}

// take returns the pending text and forgets it.
func (r *deltaRelay) take() string {
	text := r.pending.String()
	r.pending.Reset()
	return text
}

// flush publishes the pending text, if any.
func (r *deltaRelay) flush() {
	if r.pending.Len() == 0 || !r.ready() {
		return
	}
	r.rt.publish(r.t.SessionID, api.EventDelta, api.TextEvent{Text: r.pending.String(), TurnID: r.t.ID})
	r.pending.Reset()
}

// Run is the chat runtime's agent loop: a model step, the tool calls it
// made (through the desktop), repeat until the model answers without tools.
// Each request fits the model's budget (context.go): older messages are
// compacted before one would not, and once more when the server still
// answers that it does not fit.
func (rt *Runtime) Run(ctx context.Context, t *turn.Turn, sess store.Session, agent config.Agent) turn.Outcome {
	bg := context.Background()
	c := rt.env.Config()
	provider, model, err := rt.opts.ProviderFor(agent)
	if err != nil {
		return turn.Outcome{Fail: llmErrorEvent(err)}
	}
	conv, err := rt.loadConvo(bg, t)
	if err != nil {
		return turn.Failed("internal", "could not read the conversation: %v", err)
	}
	specs := rt.toolSpecs(agent)
	system := rt.systemPrompt(c, agent, specs)
	if prompt.MemoryHasExternal(system) {
		t.Taint.Add(api.Source{Kind: "memory"})
	}
	b := rt.budgetFor(ctx, agent).withStatic(estimateStatic(system, specs))
	used := rt.contextUsed(bg, t.SessionID, conv, b)
	// fit compacts when the next request would pass the budget; false
	// means the turn has failed (out says how).
	var out turn.Outcome
	fit := func(reason string) bool {
		if reason == "budget" && used <= b.limit() {
			return true
		}
		if _, err := t.Stored(); err != nil {
			return false // never recorded: runTurn abandons the turn
		}
		if id := t.User.ID; id != 0 && conv.cur < len(conv.entries) && conv.entries[conv.cur].id == 0 {
			conv.entries[conv.cur].id = id
		}
		_, err := rt.compact(ctx, t.SessionID, agent, countUsage{provider, &t.Usage}, model, b, conv, compactOpts{reason: reason, before: used, turnID: t.ID})
		if err != nil && !errors.Is(err, errNothingToCompact) {
			rt.env.Log.Warn("compaction", "session", t.SessionID, "err", err)
			if ctx.Err() != nil {
				out = turn.Failed("cancelled", "Stopped: the turn was cancelled.")
				return false
			}
			if reason == "budget" && used+minReply <= b.window {
				return true // it still fits, with less room for the reply; the next turn compacts again
			}
			out = overflowFailure(b, "; summarizing its older messages failed ("+llmErrorEvent(err).Message+")")
			return false
		}
		used = b.static + conv.tokens(b)
		if used > b.limit() && reason == "budget" {
			out = overflowFailure(b, fmt.Sprintf(": this turn alone needs about %d tokens", used))
			return false
		}
		return true
	}
	if t.ResumeCall != "" {
		if fail := rt.resumeCall(ctx, t, agent, conv); fail != nil {
			return *fail
		}
		used = rt.contextUsed(bg, t.SessionID, conv, b)
	}
	var all strings.Builder // the whole turn's text = concatenation of its deltas
	for step := 0; step < c.MaxToolSteps; step++ {
		if !fit("budget") {
			return out
		}
		if step > 0 && all.Len() > 0 {
			sep := "\n\n"
			all.WriteString(sep)
			rt.publish(t.SessionID, api.EventDelta, api.TextEvent{Text: sep, TurnID: t.ID})
		}
		deltas := rt.newDeltaRelay(t)
		var reply llm.Reply
		for retried := false; ; retried = true {
			uctx, cancel := context.WithTimeout(ctx, c.UpstreamTimeout())
			reply, err = provider.Stream(uctx, llm.Request{Model: model, Messages: conv.messages(system, b), Tools: rt.withLoaded(t.SessionID, agent, specs)}, func(d string) {
				all.WriteString(d)
				deltas.add(d)
			})
			cancel()
			var le *llm.Error
			if !retried && errors.As(err, &le) && le.Code == llm.CodeBadRequest && conv.dropToolImages() {
				// A model that does not read images: the tools' images
				// are left out and the step sent again (images.go).
				rt.env.Log.Info("the model refused a request with a tool's images; sent again without them", "session", t.SessionID, "model", model)
				continue
			}
			if retried || !errors.As(err, &le) || le.Code != llm.CodeContextOverflow {
				break
			}
			// The server counts more than the budget allowed for: learn
			// its window when it names it, compact, retry once.
			// A window it names is planned for from now on (this turn even
			// when the configured one is larger); without one, the
			// compaction plans for what was sent as too much.
			n := namedWindow(le.Message)
			rt.learnWindow(agent, n)
			if n == 0 {
				n = used * 3 / 4
			}
			if n < b.window {
				b = b.resized(max(n, 1024))
			}
			if !fit("overflow") {
				return out
			}
		}
		if _, serr := t.Stored(); serr != nil {
			return turn.Outcome{} // never recorded: runTurn abandons the turn
		}
		if err != nil {
			deltas.flush()
			if reply.Text != "" { // keep what the user already saw
				if _, err := rt.env.Store.AddMessage(bg, store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "assistant", Content: reply.Text, Meta: `{"partial":true}`}); err != nil {
					rt.env.Log.Error("store partial reply", "session", t.SessionID, "turn", t.ID, "err", err)
				}
			}
			var le *llm.Error
			if errors.As(err, &le) && le.Code == llm.CodeContextOverflow {
				return overflowFailure(b, " even after compacting it (the server said: "+le.Message+")")
			}
			if le != nil && le.Code == llm.CodeBadRequest && conv.hasImages() {
				return imagesRefused(model, le) // images.go
			}
			return turn.Outcome{Fail: llmErrorEvent(err)}
		}
		t.Usage.Requests++
		t.Usage.PromptTokens += reply.Usage.PromptTokens
		t.Usage.CompletionTokens += reply.Usage.CompletionTokens
		t.Window = b.window
		if reply.Usage.PromptTokens > 0 {
			used = reply.Usage.PromptTokens + reply.Usage.CompletionTokens
			t.Usage.ContextTokens, t.Usage.SummaryID = used, 0
			if conv.sum != nil {
				t.Usage.SummaryID = conv.sum.ID
			}
		}
		answer := store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "assistant", Content: reply.Text}
		if len(reply.ToolCalls) == 0 {
			return turn.Outcome{Final: all.String(), Last: &answer, Tail: deltas.take()}
		}
		deltas.flush()
		// One id per call from here on: the service's, in the stored
		// history, in what the model is sent back, on the desktop's
		// tool.request and in its audit log (models reuse theirs, "call_0",
		// across turns and sessions); the model's own is kept beside it.
		modelIDs := make([]string, len(reply.ToolCalls))
		for i := range reply.ToolCalls {
			modelIDs[i] = reply.ToolCalls[i].ID
			reply.ToolCalls[i].ID = turn.NewID("tc_")
		}
		calls, err := json.Marshal(reply.ToolCalls)
		if err != nil {
			return turn.Failed("internal", "could not record the tool calls: %v", err)
		}
		answer.ToolCalls = string(calls)
		stored, err := rt.env.Store.AddMessage(bg, answer)
		if err != nil {
			return turn.Failed("internal", "could not store the answer: %v", err)
		}
		am := llm.Message{Role: "assistant", Content: reply.Text, ToolCalls: reply.ToolCalls}
		conv.add(am, stored.ID)
		if reply.Usage.PromptTokens == 0 {
			used += conv.entries[len(conv.entries)-1].tokens
		}
		results := rt.runToolCalls(ctx, t, agent, reply.ToolCalls, modelIDs)
		for i, tc := range reply.ToolCalls {
			content, images, meta := toolMessage(tc.Name, results[i])
			m, err := rt.env.Store.AddMessage(bg, store.Message{SessionID: t.SessionID, TurnID: t.ID, Role: "tool", Content: content, ToolCallID: tc.ID,
				Meta: meta})
			if err != nil {
				rt.env.Log.Error("store tool message", "err", err)
			}
			conv.add(llm.Message{Role: "tool", Content: content, ToolCallID: tc.ID, Images: images}, m.ID)
			used += conv.entries[len(conv.entries)-1].tokens
		}
		if ctx.Err() != nil {
			return turn.Failed("cancelled", "Stopped: the turn was cancelled.")
		}
	}
	return turn.Failed("max_tool_steps", "The agent made more than %d rounds of tool calls in one turn and was stopped.", c.MaxToolSteps)
}

func llmErrorEvent(err error) *api.ErrorEvent {
	var le *llm.Error
	if errors.As(err, &le) {
		return &api.ErrorEvent{Code: le.Code, Message: le.Message}
	}
	return &api.ErrorEvent{Code: llm.CodeUpstream, Message: err.Error()}
}

// toolMessage is what the result r of the tool name is stored and sent
// as: its text, its images (images.go: for models that read them) and its
// message's meta (its media and provenance).
func toolMessage(name string, r api.ToolResult) (content string, images []string, meta string) {
	content, images = toolContent(r), toolImages(r)
	return content, images, provenance.Meta(toolMediaMeta(images, toolAudio(r)), provenance.Of(name, r)...)
}

// toolContent is what the model reads as a tool's result.
func toolContent(r api.ToolResult) string {
	if r.OK {
		return r.Result
	}
	msg := "failed"
	if r.Error != nil && *r.Error != "" {
		msg = *r.Error
	}
	if why := api.UserReason(r.UserReason); why != "" {
		msg += ". The user said why: " + why
	}
	return "Tool call not completed: " + msg
}

func strp(s string) *string { return &s }

// runToolCalls sends the model's tool calls (with the service's ids;
// modelIDs are the model's own) to the desktop (tool.request),
// waits for every result, and publishes each as it arrives (tool.result). Calls
// with no result within the configured limit are answered as denied: fail closed.
func (rt *Runtime) runToolCalls(ctx context.Context, t *turn.Turn, agent config.Agent, calls []llm.ToolCall, modelIDs []string) []api.ToolResult {
	results := make([]api.ToolResult, len(calls))
	done := make([]bool, len(calls))
	waits := map[int]*toolwait.Wait{}
	argsOf := map[int]json.RawMessage{}
	ch := make(chan toolwait.Result, len(calls))
	wireIDs := make([]string, len(calls))
	for i := range calls {
		wireIDs[i] = calls[i].ID
	}
	started := time.Now()
	settle := func(i int, r api.ToolResult) {
		r.ID, r.TurnID = wireIDs[i], t.ID
		results[i], done[i] = r, true
		t.Taint.Add(provenance.Of(calls[i].Name, r)...) // the model reads text no one vouched for
		t.Stats.AddTool(calls[i].Name, time.Since(started))
		rt.publish(t.SessionID, api.EventToolResult, r)
	}
	serverRunning := map[int]bool{}
	gated := map[int]ServerTool{} // outbound service tools awaiting the desktop's gate
	runServer := func(i int, st ServerTool, name string, args json.RawMessage) {
		// Service tools run here, concurrently (parallel delegation).
		serverRunning[i] = true
		go func() {
			vctx, verdict := provenance.WithVerdict(ctx)
			res, err := st.Run(vctx, t, agent, args)
			r := api.ToolResult{OK: err == nil, Result: res, Source: "service", Name: name, Arguments: args}
			if trust, origin, ok := verdict.Get(); ok {
				r.Trust, r.Origin = trust, origin
			} // else untrusted, as the tool itself (provenance.Of): fail closed
			if err != nil {
				r.Error = strp(err.Error())
			}
			ch <- toolwait.Result{Idx: i, R: r}
		}()
	}
	request := func(i int, tc llm.ToolCall, args json.RawMessage, reason, risk, source, target string) {
		argsOf[i] = args
		waits[i] = rt.opts.Waiter.Request(t, store.ToolCall{ID: wireIDs[i], ModelCallID: modelIDs[i], SessionID: t.SessionID, TurnID: t.ID, Name: tc.Name, Arguments: string(args), Risk: risk, Reason: reason},
			api.ToolCall{ID: wireIDs[i], Name: tc.Name, Arguments: args, Risk: risk, Reason: reason, TurnID: t.ID, Source: source, Target: target, DelegatedBy: t.Delegators(), Task: t.Task,
				Untrusted: t.Taint.List()}, i, ch)
	}
	c := rt.env.Config()
	for i, tc := range calls {
		args, reason := splitReason(tc.Arguments)
		if st, ok := rt.serverToolFor(tc.Name); ok { // catalog.go
			if !prompt.ToolInScope(agent, tc.Name, st.Capabilities) {
				settle(i, api.ToolResult{OK: false, Error: strp(fmt.Sprintf("tool %q is not allowed for agent %q", tc.Name, agent.AgentID)), Source: "service", Name: tc.Name, Arguments: args, Refused: true})
				continue
			}
			if st.Outbound != nil {
				if target, out := st.Outbound(c, agent, args); out {
					def, _ := tools.Lookup(tc.Name)
					gated[i] = st
					request(i, tc, args, reason, string(def.Risk), "service", target)
					continue
				}
			}
			runServer(i, st, tc.Name, args)
			continue
		}
		def, known := rt.desktopTool(tc.Name)
		if !known || !rt.toolAllowed(agent, tc.Name) {
			msg := fmt.Sprintf("unknown tool %q", tc.Name)
			if known {
				msg = fmt.Sprintf("tool %q is not allowed for agent %q", tc.Name, agent.AgentID)
			}
			settle(i, api.ToolResult{OK: false, Error: strp(msg), Source: "service", Name: tc.Name, Arguments: args, Refused: true})
			continue
		}
		request(i, tc, args, reason, string(def.Risk), "", "")
	}
	limit := t.ToolWait(rt.env.Config().ToolResultTimeout())
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	deadlineC, cancelled := deadline.C, ctx.Done()
	expireAll := func(status, msg string) {
		for i, w := range waits {
			if done[i] {
				continue
			}
			if r, ok := rt.opts.Waiter.Expire(w, status, msg); ok {
				settle(i, r)
			} // else the desktop's result claimed it first and is on ch
		}
	}
	for pending := len(waits) + len(serverRunning); pending > 0; {
		select {
		case ir := <-ch:
			if st, ok := gated[ir.Idx]; ok && ir.R.Source == "desktop" {
				// The gate's answer on an outbound service tool: run it
				// only if allowed; a denial is its result.
				delete(gated, ir.Idx)
				if ir.R.OK {
					runServer(ir.Idx, st, calls[ir.Idx].Name, argsOf[ir.Idx])
					break
				}
				ir.R.Name, ir.R.Arguments = calls[ir.Idx].Name, argsOf[ir.Idx]
			}
			if !done[ir.Idx] {
				settle(ir.Idx, ir.R)
			}
		case <-deadlineC:
			deadlineC = nil
			expireAll("timeout", toolwait.TimeoutMessage(limit))
		case <-cancelled:
			cancelled = nil
			expireAll("cancelled", toolwait.CancelledMessage)
		}
		pending = 0
		for i := range calls {
			if (waits[i] != nil || serverRunning[i]) && !done[i] {
				pending++
			}
		}
	}
	return results
}

// splitReason removes the "reason" argument the service adds to every tool's
// schema and returns the remaining arguments and the reason.
func splitReason(raw string) (json.RawMessage, string) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &m); err != nil || m == nil {
		return json.RawMessage(raw), ""
	}
	var reason string
	if r, ok := m["reason"]; ok {
		if json.Unmarshal(r, &reason) != nil {
			reason = "" // not a string: the call gives no reason
		}
		delete(m, "reason")
	}
	b, err := json.Marshal(m)
	if err != nil { // values Unmarshal accepted always encode again
		return json.RawMessage("{}"), reason
	}
	return b, reason
}
