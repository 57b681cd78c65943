package a2art

// One turn's exchange with an A2A agent: the task's events as deltas and
// status lines, a broken stream resumed, the task's end as the turn's.

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"

	"jarvis/api"
	"jarvis/service/config"
	"jarvis/service/store"
	"jarvis/service/turn"
)

type exchange struct {
	rt     *Runtime
	t      *turn.Turn
	agent  config.Agent
	client *a2aclient.Client

	text      strings.Builder // the reply: artifacts' text as it streamed
	contextID string
	taskID    a2a.TaskID
	state     a2a.TaskState
	status    string // the last status message's text
	// push is the turn's mailbox of push deliveries (push.go), or nil.
	push *pushWait
}

// stream sends with message/stream; a stream that breaks before the task
// ended is resumed once (tasks/resubscribe), then read with tasks/get.
func (x *exchange) stream(ctx context.Context, p *a2a.MessageSendParams) error {
	err := x.follow(x.client.SendStreamingMessage(ctx, p))
	if err == nil || ctx.Err() != nil || x.taskID == "" || x.state.Terminal() {
		return err
	}
	x.note(fmt.Sprintf("the stream from %s broke (%v); following its task again", x.agent.DisplayName, plain(err)))
	if err = x.follow(x.client.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: x.taskID})); err == nil && x.state.Terminal() {
		// Chunks sent while no stream was open are in the task's
		// artifacts: the reply is the task's, read back whole.
		if task, err := x.client.GetTask(ctx, &a2a.TaskQueryParams{ID: x.taskID}); err == nil {
			var whole strings.Builder
			for _, a := range task.Artifacts {
				whole.WriteString(partsText(a.Parts))
			}
			if whole.Len() > 0 {
				x.text.Reset()
				x.text.WriteString(whole.String())
			}
		}
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return x.poll(ctx)
}

// poll reads the task with tasks/get until it ends, and takes the push
// deliveries meanwhile: with push notifications, an agent tasks/get cannot
// reach is waited for (until the turn's timeout) instead of failing the turn.
func (x *exchange) poll(ctx context.Context) error {
	var pushed <-chan *a2a.Task
	if x.push != nil {
		pushed = x.push.ch
	}
	said := false
	for wait := 250 * time.Millisecond; ; wait = min(wait*2, 5*time.Second) {
		task, err := x.client.GetTask(ctx, &a2a.TaskQueryParams{ID: x.taskID})
		switch {
		case err != nil && pushed == nil:
			return err
		case err != nil:
			if !said && ctx.Err() == nil {
				said = true
				x.note(fmt.Sprintf("%s cannot be reached (%v); waiting for its push notification", x.agent.DisplayName, plain(err)))
			}
		default:
			x.task(task, true)
			if x.ended() {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case t := <-pushed:
			if t.ID == x.taskID {
				x.whole(t)
				if x.ended() {
					return nil
				}
			}
		case <-time.After(wait):
		}
	}
}

// ended reports a task that ended the turn: done, or waiting for the user.
func (x *exchange) ended() bool {
	return x.state.Terminal() || x.state == a2a.TaskStateInputRequired || x.state == a2a.TaskStateAuthRequired
}

// whole takes a task read back whole (a push delivery): at its end its
// artifacts are the reply, chunks that did not stream included.
func (x *exchange) whole(t *a2a.Task) {
	x.task(t, true)
	if !x.ended() {
		return
	}
	var b strings.Builder
	for _, a := range t.Artifacts {
		b.WriteString(partsText(a.Parts))
	}
	if b.Len() > 0 {
		x.text.Reset()
		x.text.WriteString(b.String())
	}
}

// send sends with message/send (blocking) and reads the answer.
func (x *exchange) send(ctx context.Context, p *a2a.MessageSendParams) error {
	res, err := x.client.SendMessage(ctx, p)
	if err != nil {
		return err
	}
	switch r := res.(type) {
	case *a2a.Message:
		x.message(r)
		x.state = a2a.TaskStateCompleted
	case *a2a.Task:
		x.task(r, true)
		if !x.state.Terminal() && x.state != a2a.TaskStateInputRequired && x.state != a2a.TaskStateAuthRequired {
			return x.poll(ctx)
		}
	}
	return nil
}

func (x *exchange) follow(events iter.Seq2[a2a.Event, error]) error {
	for ev, err := range events {
		if err != nil {
			return err
		}
		switch ev := ev.(type) {
		case *a2a.Message:
			x.message(ev)
			x.state = a2a.TaskStateCompleted
		case *a2a.Task:
			x.task(ev, x.text.Len() == 0)
		case *a2a.TaskArtifactUpdateEvent:
			x.ids(ev.ContextID, ev.TaskID)
			x.delta(partsText(ev.Artifact.Parts))
		case *a2a.TaskStatusUpdateEvent:
			x.ids(ev.ContextID, ev.TaskID)
			x.setStatus(ev.Status)
		}
	}
	return nil
}

func (x *exchange) ids(contextID string, taskID a2a.TaskID) {
	if contextID != "" {
		x.contextID = contextID
	}
	if taskID != "" {
		x.taskID = taskID
	}
}

// task takes a whole task; withArtifacts adds its artifacts' text to the
// reply (a task read back whose artifacts did not stream).
func (x *exchange) task(t *a2a.Task, withArtifacts bool) {
	x.ids(t.ContextID, t.ID)
	if withArtifacts && x.text.Len() == 0 {
		for _, a := range t.Artifacts {
			x.delta(partsText(a.Parts))
		}
	}
	x.setStatus(t.Status)
}

func (x *exchange) setStatus(s a2a.TaskStatus) {
	x.state = s.State
	if s.Message != nil {
		if txt := partsText(s.Message.Parts); txt != "" {
			x.status = txt
			if !s.State.Terminal() {
				x.note(x.agent.DisplayName + ": " + txt)
			}
		}
	}
}

func (x *exchange) message(m *a2a.Message) {
	x.ids(m.ContextID, m.TaskID)
	x.delta(partsText(m.Parts))
}

func (x *exchange) delta(s string) {
	if s == "" {
		return
	}
	x.text.WriteString(s)
	x.rt.env.Publisher.Publish(x.t.SessionID, api.EventDelta, api.TextEvent{Text: s, TurnID: x.t.ID})
}

func (x *exchange) note(s string) {
	x.rt.env.Publisher.Publish(x.t.SessionID, api.EventStatus, api.StatusEvent{Text: s, Kind: "agent_status", TurnID: x.t.ID})
}

// cancelTask asks the agent to cancel the task (the turn was cancelled or timed out).
func (x *exchange) cancelTask() {
	if x.taskID == "" || x.state.Terminal() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := x.client.CancelTask(ctx, &a2a.TaskIDParams{ID: x.taskID}); err != nil {
		x.rt.env.Log.Info("a2a: tasks/cancel failed", "agent", x.agent.AgentID, "task", x.taskID, "err", err)
	}
}

// outcome is the turn's end from the task's.
func (x *exchange) outcome() turn.Outcome {
	reply := x.text.String()
	switch x.state {
	case a2a.TaskStateFailed, a2a.TaskStateRejected, a2a.TaskStateCanceled:
		why := x.status
		if why == "" {
			why = "no reason given"
		}
		return turn.Failed("a2a_failed", "Agent %q's task ended %s: %s", x.agent.AgentID, x.state, why)
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		if x.status != "" && !strings.Contains(reply, x.status) {
			reply = strings.TrimSpace(reply + "\n\n" + x.status)
		}
	case a2a.TaskStateCompleted:
		if reply == "" {
			reply = x.status
		}
	default:
		return turn.Failed("a2a_failed", "Agent %q's stream ended with its task still %s.", x.agent.AgentID, orUnknown(x.state))
	}
	if strings.TrimSpace(reply) == "" {
		return turn.Failed("a2a_failed", "Agent %q ended its task without a reply.", x.agent.AgentID)
	}
	var m meta
	m.A2A.ContextID, m.A2A.TaskID, m.A2A.State = x.contextID, string(x.taskID), string(x.state)
	b, _ := json.Marshal(m)
	answer := store.Message{SessionID: x.t.SessionID, TurnID: x.t.ID, Role: "assistant", Content: reply, Meta: string(b)}
	return turn.Outcome{Final: reply, Last: &answer}
}

func orUnknown(s a2a.TaskState) string {
	if s == "" {
		return "unknown"
	}
	return string(s)
}

// partsText joins the text of parts (data parts as JSON; files named).
func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case a2a.TextPart:
			b.WriteString(p.Text)
		case *a2a.TextPart:
			b.WriteString(p.Text)
		case a2a.DataPart:
			j, _ := json.Marshal(p.Data)
			b.Write(j)
		case a2a.FilePart:
			b.WriteString("[a file]")
		}
	}
	return b.String()
}
