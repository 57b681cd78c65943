package service_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/service/config"
)

// TestToolCatalogRoute: PUT /v1/tools/catalog replaces the catalogue; a
// bad one is refused in the error envelope and the previous one stays.
func TestToolCatalogRoute(t *testing.T) {
	e := newEnv(t)
	good := `{"tools":[{"name":"mcp__srv__echo","description":"Echo.","parameters":{"type":"object","properties":{"text":{"type":"string"}}},"capabilities":["mcp.srv"]}]}`
	code, _, _ := raw(t, http.MethodPut, e.srv.URL+"/v1/tools/catalog", testToken, good, nil)
	if code != http.StatusOK {
		t.Fatalf("good catalogue: %d", code)
	}
	for _, bad := range []struct{ body, want string }{
		{`{"tools":[{"name":"read_file","parameters":{}}]}`, "tools[0].name \"read_file\": must be mcp__<server>__<tool>"},
		{`{"tools":[{"name":"mcp__a__b"},{"name":"mcp__a__b"}]}`, "listed twice"},
		{`{"tools":[{"name":"mcp__a__b","parameters":{"type":"string"}}]}`, "type must be \"object\""},
		{`{"tools":[{"name":"mcp__a__` + strings.Repeat("x", 60) + `"}]}`, "at most 64 characters"},
	} {
		code, body, _ := raw(t, http.MethodPut, e.srv.URL+"/v1/tools/catalog", testToken, bad.body, nil)
		if code != http.StatusBadRequest || body.Error.Code != "invalid_tool_catalog" || !strings.Contains(body.Error.Message, bad.want) {
			t.Errorf("%s: %d %+v", bad.body, code, body.Error)
		}
	}
	var cat api.ToolCatalog
	if err := e.c.Do(context.Background(), http.MethodGet, "/v1/tools/catalog", nil, &cat); err != nil {
		t.Fatal(err)
	}
	if len(cat.Tools) != 1 || cat.Tools[0].Name != "mcp__srv__echo" {
		t.Fatalf("a refused catalogue replaced the good one: %+v", cat)
	}
	if code, _, _ := raw(t, http.MethodPut, e.srv.URL+"/v1/tools/catalog", "", good, nil); code != http.StatusUnauthorized {
		t.Fatalf("without the token: %d", code)
	}
}

// TestCatalogToolsOfferedAndScoped: the catalogue's tools are offered to
// the model (with the reason property), a call goes to the desktop as a
// tool.request and its result back to the model; an agent whose deny list
// matches mcp__* is neither offered them nor allowed to call them.
func TestCatalogToolsOfferedAndScoped(t *testing.T) {
	e := newEnv(t)
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},
		"agents":[{"agentId":"general","displayName":"General"},{"agentId":"nomcp","displayName":"No MCP","toolDenylist":["mcp__*"]}]}`, e.upSrv.URL+"/v1")))
	if err != nil {
		t.Fatal(err)
	}
	e.stop()
	e.cfg = cfg
	e.start()
	if _, err := e.c.PutToolCatalog(context.Background(), api.ToolCatalog{Tools: []api.CatalogTool{{Name: "mcp__srv__echo", Description: "Echo.",
		Parameters: []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}}}); err != nil {
		t.Fatal(err)
	}
	sid := e.session("j-mcp")
	var requested []api.ToolCall
	var got collect
	answer := e.answerTools(sid, func(tc api.ToolCall) api.ToolResult {
		requested = append(requested, tc)
		return api.ToolResult{OK: true, Result: "echoed " + string(tc.Arguments)}
	})
	if err := e.c.ChatStream(context.Background(), sid, `[[tool mcp__srv__echo {"text":"hi","reason":"testing"}]]`, func(ev api.StreamEvent) error {
		got.add(ev)
		answer(ev)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(requested) != 1 || requested[0].Name != "mcp__srv__echo" || string(requested[0].Arguments) != `{"text":"hi"}` || requested[0].Reason != "testing" || requested[0].Risk != "risky" {
		t.Fatalf("tool.request %+v", requested)
	}
	if final := text(got.all(), api.EventFinal); !strings.Contains(final+text(got.all(), api.EventDelta), `echoed {"text":"hi"}`) {
		t.Fatalf("the model did not read the result: %v", types(got.all()))
	}
	reqs := e.upstream.Requests()
	offered := func(i int) string {
		var names []string
		for _, tl := range reqs[i].Tools {
			names = append(names, tl.Function.Name)
			if tl.Function.Name == "mcp__srv__echo" && !strings.Contains(fmt.Sprint(tl.Function.Parameters), "reason") {
				t.Errorf("no reason property: %s", tl.Function.Parameters)
			}
		}
		return strings.Join(names, ",")
	}
	if !strings.Contains(offered(0), "mcp__srv__echo") {
		t.Fatalf("not offered: %s", offered(0))
	}

	r, err := e.c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: "j-nomcp", AgentID: "nomcp"})
	if err != nil {
		t.Fatal(err)
	}
	requested = nil
	evs := e.chat(r.GeneralSessionID, `[[tool mcp__srv__echo {"text":"hi"}]]`)
	if len(requested) != 0 {
		t.Fatal("an out-of-scope call reached the desktop")
	}
	reqs = e.upstream.Requests()
	if strings.Contains(offered(len(reqs)-2), "mcp__") {
		t.Fatalf("offered to an agent that denies mcp__*: %s", offered(len(reqs)-2))
	}
	if !strings.Contains(text(evs, api.EventFinal)+text(evs, api.EventDelta), "unknown tool") &&
		!strings.Contains(text(evs, api.EventFinal)+text(evs, api.EventDelta), "not allowed") {
		t.Fatalf("the refusal: %v", types(evs))
	}
}

// TestLargeCatalogueOffersSearch: when the catalogue's definitions would
// take more than a tenth of the model's context, the model is offered
// mcp_tool_search instead; the tools it finds are offered from the next
// step on, and calling one goes to the desktop as usual.
func TestLargeCatalogueOffersSearch(t *testing.T) {
	e := newEnv(t)
	var cat api.ToolCatalog
	for i := 0; i < 40; i++ {
		cat.Tools = append(cat.Tools, api.CatalogTool{Name: fmt.Sprintf("mcp__big__tool%02d", i), Description: strings.Repeat("Does something unrelated. ", 8),
			Parameters: []byte(`{"type":"object","properties":{"x":{"type":"string"}}}`)})
	}
	cat.Tools = append(cat.Tools, api.CatalogTool{Name: "mcp__w__weather", Description: "Current weather for a city.",
		Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}}}`)})
	if _, err := e.c.PutToolCatalog(context.Background(), cat); err != nil {
		t.Fatal(err)
	}
	sid := e.session("j-search")
	evs := e.chat(sid, `[[tool mcp_tool_search {"query":"weather city"}]]`)
	if res := text(evs, api.EventFinal) + text(evs, api.EventDelta); !strings.Contains(res, "mcp__w__weather") || !strings.Contains(res, "now available") {
		t.Fatalf("search result: %q", res)
	}
	reqs := e.upstream.Requests()
	names := func(i int) string {
		var n []string
		for _, tl := range reqs[i].Tools {
			n = append(n, tl.Function.Name)
		}
		return strings.Join(n, ",")
	}
	if first := names(len(reqs) - 2); strings.Contains(first, "mcp__") || !strings.Contains(first, "mcp_tool_search") {
		t.Fatalf("first request's tools: %s", first)
	}
	if next := names(len(reqs) - 1); !strings.Contains(next, "mcp__w__weather") || strings.Contains(next, "mcp__big__") {
		t.Fatalf("after the search: %s", next)
	}
	var requested []string
	answer := e.answerTools(sid, func(tc api.ToolCall) api.ToolResult {
		requested = append(requested, tc.Name)
		return api.ToolResult{OK: true, Result: "sunny"}
	})
	if err := e.c.ChatStream(context.Background(), sid, `[[tool mcp__w__weather {"city":"Oslo"}]]`, func(ev api.StreamEvent) error { answer(ev); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(requested) != 1 || requested[0] != "mcp__w__weather" {
		t.Fatalf("requested %v", requested)
	}
}
