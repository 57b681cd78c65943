package service_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
)

const a2aAgents = `[{"agentId":"writer","displayName":"Writer","description":"writes things"},
	{"agentId":"hidden","displayName":"Hidden","apiExposed":false}]`

// a2aClient is a2a-go's own client, built from the card the service
// serves, with the service's token as the card's bearer scheme asks.
func a2aClient(t *testing.T, e *env, token string) (*a2aclient.Client, *a2a.AgentCard, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	card, err := agentcard.NewResolver(e.srv.Client()).Resolve(ctx, e.srv.URL)
	if err != nil {
		t.Fatalf("resolve the agent card: %v", err)
	}
	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("test", "bearer", a2aclient.AuthCredential(token))
	c, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithJSONRPCTransport(e.srv.Client()),
		a2aclient.WithInterceptors(&a2aclient.AuthInterceptor{Service: creds}))
	if err != nil {
		t.Fatalf("client from the card: %v", err)
	}
	return c, card, a2aclient.WithSessionID(ctx, "test")
}

func userMessage(text, skill string) *a2a.MessageSendParams {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})
	if skill != "" {
		m.Metadata = map[string]any{"skill": skill}
	}
	return &a2a.MessageSendParams{Message: m}
}

func artifactText(task *a2a.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			if tp, ok := p.(a2a.TextPart); ok {
				b.WriteString(tp.Text)
			}
		}
	}
	return b.String()
}

// Conformance, server side: a2a-go's client finds the exposed agents as
// skills on the card, sends a message (message/send), streams one
// (message/stream), reads the task back (tasks/get) and cancels one
// (tasks/cancel), against the real service.
func TestA2AServerWithA2AGoClient(t *testing.T) {
	e := newEnv(t)
	e.setAgents(a2aAgents, "")
	c, card, ctx := a2aClient(t, e, testToken)
	if len(card.Skills) != 1 || card.Skills[0].ID != "writer" || !strings.HasSuffix(card.URL, "/v1/a2a") {
		t.Fatalf("card skills %+v url %q: want the exposed agent only", card.Skills, card.URL)
	}
	if _, ok := card.SecuritySchemes["bearer"]; !ok || len(card.Security) != 1 {
		t.Fatalf("card security %+v %+v", card.SecuritySchemes, card.Security)
	}

	res, err := c.SendMessage(ctx, userMessage("hello there", ""))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || artifactText(task) != "You said: hello there" {
		t.Fatalf("message/send result %#v", res)
	}
	got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted || got.ContextID != task.ContextID {
		t.Fatalf("tasks/get %+v: %v", got, err)
	}

	var deltas []string
	var final a2a.TaskState
	for ev, err := range c.SendStreamingMessage(ctx, userMessage("[[deltas 4]]", "writer")) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch ev := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range ev.Artifact.Parts {
				deltas = append(deltas, p.(a2a.TextPart).Text)
			}
		case *a2a.TaskStatusUpdateEvent:
			if ev.Final {
				final = ev.Status.State
			}
		}
	}
	if strings.Join(deltas, "") != "w0 w1 w2 w3 " || len(deltas) != 4 || final != a2a.TaskStateCompleted {
		t.Fatalf("streamed deltas %q, final %q", deltas, final)
	}

	// A slow turn, cancelled once it has started streaming.
	var taskID a2a.TaskID
	final = ""
	for ev, err := range c.SendStreamingMessage(ctx, userMessage("[[slow 200]][[deltas 50]]", "writer")) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch ev := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			if taskID == "" {
				taskID = ev.TaskID
				if _, err := c.CancelTask(ctx, &a2a.TaskIDParams{ID: taskID}); err != nil {
					t.Fatalf("tasks/cancel: %v", err)
				}
			}
		case *a2a.TaskStatusUpdateEvent:
			if ev.Final {
				final = ev.Status.State
			}
		}
	}
	if final != a2a.TaskStateCanceled {
		t.Fatalf("a cancelled task ended %q", final)
	}
	got, err = c.GetTask(ctx, &a2a.TaskQueryParams{ID: taskID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("tasks/get of the cancelled task %+v: %v", got, err)
	}

	// An agent with apiExposed false is not a skill.
	res, err = c.SendMessage(ctx, userMessage("hi", "hidden"))
	if err != nil {
		t.Fatal(err)
	}
	if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateFailed || !strings.Contains(msgText(task.Status.Message), `no skill "hidden"`) {
		t.Fatalf("a message to a hidden agent: %#v", res)
	}
}

func msgText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		if tp, ok := p.(a2a.TextPart); ok {
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

// The JSON-RPC endpoint is behind the service's token; malformed JSON-RPC
// gets a JSON-RPC parse error, not a crash or an HTML page.
func TestA2AServerTokenAndMalformedRequests(t *testing.T) {
	e := newEnv(t)
	e.setAgents(a2aAgents, "")
	c, _, ctx := a2aClient(t, e, "wrong-token")
	if _, err := c.SendMessage(ctx, userMessage("hello", "")); err == nil {
		t.Fatal("a message with a wrong token was accepted")
	}
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/a2a", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{`))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Error == nil || body.Error.Code != -32700 {
		t.Fatalf("malformed JSON-RPC answered %d %+v (%v)", resp.StatusCode, body.Error, err)
	}
}

// The JSON-RPC endpoint's body is capped like every route's: 413 in the
// service's envelope before a2a-go reads it.
func TestA2AServerBodyCap(t *testing.T) {
	e := newEnv(t)
	big := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`
	status, body, _ := raw(t, "POST", e.srv.URL+"/v1/a2a", testToken, big, nil)
	if status != http.StatusRequestEntityTooLarge || body.Error.Code != "body_too_large" {
		t.Fatalf("%d %+v", status, body)
	}
}
