package mcp

// Task-augmented calls to a Streamable HTTP server. Its connection cannot
// be wrapped as a stdio one is (tasks.go), but go-sdk's session tells its
// id and protocol version, and a Streamable HTTP server takes any POST of
// that session: the task's own requests (tools/list read for
// execution.taskSupport, tools/call with "task", tasks/get, tasks/result,
// tasks/cancel) are sent as such POSTs, through the same HTTP client (the
// configured headers, the sign-in).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpTasks runs the task calls of one Streamable HTTP server.
type httpTasks struct {
	url    string
	client *http.Client
	seq    atomic.Int64

	mu      sync.Mutex
	support map[string]string // tool name → execution.taskSupport
}

// useHTTPTasks sets up the task calls of a Streamable HTTP server.
func (s *server) useHTTPTasks(url string, c *http.Client) {
	s.httpTasks.Store(&httpTasks{url: url, client: c, support: map[string]string{}})
}

// listTaskSupport reads execution.taskSupport of the server's tools (which
// go-sdk's tools/list drops); only for a Streamable HTTP server.
func (s *server) listTaskSupport(ctx context.Context, cs *sdk.ClientSession) {
	h := s.httpTasks.Load()
	if h == nil {
		return
	}
	support := map[string]string{}
	cursor := ""
	for page := 0; page < 100; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := h.rpc(ctx, cs, "tools/list", params)
		if err != nil {
			s.m.log.Warn("mcp: reading which tools run as tasks failed", "server", s.cfg.Name, "err", err)
			return
		}
		page, next, err := toolsTaskSupport(raw)
		if err != nil {
			return
		}
		for name, ts := range page {
			if ts != "" {
				support[name] = ts
			}
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	h.mu.Lock()
	h.support = support
	h.mu.Unlock()
}

// callTool is the call of params: as a task when the server is a
// Streamable HTTP one and the tool requires a task; go-sdk's CallTool
// otherwise (on stdio and SSE, the connection makes it a task).
func (s *server) callTool(ctx context.Context, cs *sdk.ClientSession, params *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	h := s.httpTasks.Load()
	if h == nil {
		return cs.CallTool(ctx, params)
	}
	h.mu.Lock()
	need := h.support[params.Name] == "required"
	h.mu.Unlock()
	if !need {
		return cs.CallTool(ctx, params)
	}
	return s.callHTTPTask(ctx, h, cs, params)
}

// callHTTPTask sends a call as a task and follows it: its status messages
// are the call's progress, tasks/result its answer; a call given up (Stop,
// timeout) cancels the task.
func (s *server) callHTTPTask(ctx context.Context, h *httpTasks, cs *sdk.ClientSession, params *sdk.CallToolParams) (*sdk.CallToolResult, error) {
	p := map[string]any{"name": params.Name, "arguments": params.Arguments, "task": map[string]any{}}
	if params.Meta != nil {
		p["_meta"] = params.Meta
	}
	raw, err := h.rpc(ctx, cs, "tools/call", p)
	if err != nil {
		return nil, err
	}
	var created struct {
		Task *taskStatus `json:"task"`
	}
	if err := json.Unmarshal(raw, &created); err != nil || created.Task == nil || created.Task.TaskID == "" {
		// Answered at once, without a task.
		var res sdk.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("the server's answer could not be read: %w", err)
		}
		return &res, nil
	}
	t := created.Task
	s.m.log.Info("mcp: tool call runs as a task", "server", s.cfg.Name, "tool", params.Name, "task", t.TaskID)
	token := params.GetProgressToken()
	ids := map[string]string{"taskId": t.TaskID}

	type answer struct {
		raw json.RawMessage
		err error
	}
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan answer, 1)
	go func() {
		raw, err := h.rpcServing(fctx, cs, s, "tasks/result", ids)
		done <- answer{raw, err}
	}()
	var steps float64
	last := ""
	report := func(t *taskStatus) {
		if token == nil || t.StatusMessage == "" || t.StatusMessage == last {
			return
		}
		last = t.StatusMessage
		steps++
		s.m.progress(&sdk.ProgressNotificationParams{ProgressToken: token, Progress: steps, Message: t.StatusMessage})
	}
	report(t)
	for {
		wait := t.pollWait()
		select {
		case a := <-done:
			if a.err != nil {
				if ctx.Err() != nil {
					s.cancelHTTPTask(h, cs, params.Name, t.TaskID)
					return nil, ctx.Err()
				}
				return nil, a.err
			}
			var res sdk.CallToolResult
			if err := json.Unmarshal(a.raw, &res); err != nil {
				return nil, fmt.Errorf("the task's result could not be read: %w", err)
			}
			return &res, nil
		case <-ctx.Done():
			stop()
			s.cancelHTTPTask(h, cs, params.Name, t.TaskID)
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		raw, err := h.rpc(fctx, cs, "tasks/get", ids)
		if err != nil {
			continue // tasks/result still answers
		}
		var now taskStatus
		if json.Unmarshal(raw, &now) == nil {
			t = &now
			report(t)
		}
	}
}

// cancelHTTPTask asks the server to cancel a task its caller gave up.
func (s *server) cancelHTTPTask(h *httpTasks, cs *sdk.ClientSession, tool, taskID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := h.rpc(ctx, cs, "tasks/cancel", map[string]string{"taskId": taskID})
	if err != nil {
		s.m.log.Warn("mcp: cancelling a task failed", "server", s.cfg.Name, "tool", tool, "task", taskID, "err", err)
		return
	}
	var t taskStatus
	_ = json.Unmarshal(raw, &t)
	s.m.log.Info("mcp: task cancelled", "server", s.cfg.Name, "tool", tool, "task", taskID, "status", t.Status)
}

// rpc POSTs one request in go-sdk's session and reads its answer (a JSON
// body, or the event stream until the answer; the server's other messages
// on that stream are skipped).
func (h *httpTasks) rpc(ctx context.Context, cs *sdk.ClientSession, method string, params any) (json.RawMessage, error) {
	return h.rpcServing(ctx, cs, nil, method, params)
}

// rpcServing is rpc whose stream may carry the server's requests (a
// question for the user while a task waits in tasks/result): s answers
// them; nil: they are left unanswered.
func (h *httpTasks) rpcServing(ctx context.Context, cs *sdk.ClientSession, s *server, method string, params any) (json.RawMessage, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id, err := jsonrpc.MakeID(fmt.Sprintf("jarvis-task-%d", h.seq.Add(1)))
	if err != nil {
		return nil, err
	}
	body, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: method, Params: p})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	resp, err := h.post(req, cs)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%s: the server answered %s: %s", method, resp.Status, strings.TrimSpace(string(b)))
	}
	answer := func(data []byte) (json.RawMessage, bool, error) {
		m, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return nil, false, nil // not a message: skipped
		}
		if q, ok := m.(*jsonrpc.Request); ok && q.IsCall() && s != nil {
			go h.serve(ctx, cs, s, q)
			return nil, false, nil
		}
		r, ok := m.(*jsonrpc.Response)
		if !ok || r.ID != id {
			return nil, false, nil
		}
		if r.Error != nil {
			return nil, true, fmt.Errorf("%s: %w", method, r.Error)
		}
		return r.Result, true, nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "text/event-stream" {
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxRPCAnswer))
		if err != nil {
			return nil, err
		}
		if raw, ok, err := answer(b); ok {
			return raw, err
		}
		return nil, fmt.Errorf("%s: the server's answer could not be read", method)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), maxRPCAnswer)
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data.Len() > 0 {
				if raw, ok, err := answer(data.Bytes()); ok {
					return raw, err
				}
			}
			data.Reset()
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, errors.New(method + ": the server ended the stream without an answer")
}

// maxRPCAnswer caps one answer read by rpc (a tool's result with images).
const maxRPCAnswer = 32 << 20

// post sends a POST of go-sdk's session (its id and protocol version).
func (h *httpTasks) post(req *http.Request, cs *sdk.ClientSession) (*http.Response, error) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid := cs.ID(); sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if ir := cs.InitializeResult(); ir != nil && ir.ProtocolVersion != "" {
		req.Header.Set("Mcp-Protocol-Version", ir.ProtocolVersion)
	}
	return h.client.Do(req)
}

// serve answers a server's request that came on a task's stream: a
// question for the user (elicitation, as go-sdk's own handler would ask
// it); anything else is refused.
func (h *httpTasks) serve(ctx context.Context, cs *sdk.ClientSession, s *server, q *jsonrpc.Request) {
	r := &jsonrpc.Response{ID: q.ID}
	switch q.Method {
	case "elicitation/create":
		var p sdk.ElicitParams
		if err := json.Unmarshal(q.Params, &p); err != nil {
			r.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			break
		}
		res, err := s.elicit(ctx, &p)
		if err != nil {
			r.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			break
		}
		r.Result, _ = json.Marshal(res)
	default:
		r.Error = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: q.Method + " is not answered during a task"}
	}
	body, err := jsonrpc.EncodeMessage(r)
	if err != nil {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader(body))
	if err != nil {
		return
	}
	resp, err := h.post(req, cs)
	if err != nil {
		s.m.log.Warn("mcp: answering a server's request during a task failed", "server", s.cfg.Name, "method", q.Method, "err", err)
		return
	}
	resp.Body.Close()
}
