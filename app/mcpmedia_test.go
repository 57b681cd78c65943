package app

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"jarvis/api"
	"jarvis/app/mcp"
	"jarvis/internal/testwait"
	"jarvis/service/llm"
)

// everythingDesktop is the real service and desktop with
// @modelcontextprotocol/server-everything (app/mcp/testdata) over stdio,
// its catalogue sent to the service; tweaks change the runner's options.
func everythingDesktop(t *testing.T, policy string, tweaks ...func(*ToolRunnerOptions)) *realDesktop {
	t.Helper()
	return everythingDesktopWith(t, policy, mcp.Options{}, tweaks...)
}

// everythingDesktopWith is everythingDesktop with the Manager's options
// (InitTimeout is set) and the runner's tweaked.
func everythingDesktopWith(t *testing.T, policy string, mo mcp.Options, tweaks ...func(*ToolRunnerOptions)) *realDesktop {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("mcp", "testdata", "node_modules", ".bin", "mcp-server-everything"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("server-everything is not installed: run scripts/setup.sh (npm ci in app/mcp/testdata): %v", err)
	}
	mo.InitTimeout = 30 * time.Second
	m, err := mcp.New(mo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	m.Apply(m.Trust(mcp.Config{Servers: []mcp.ServerConfig{{Name: "every", Command: bin, Args: []string{"stdio"}}}}))
	d := newRealDesktopWith(t, 60, policy, func(o *ToolRunnerOptions) {
		o.MCP = m
		for _, tw := range tweaks {
			if tw != nil {
				tw(o)
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go SyncMCPCatalog(ctx, d.c, m, nil, 0)
	testwait.Until(t, "server-everything's tools in the service's catalogue", 30*time.Second, func() bool {
		var cat api.ToolCatalog
		if err := d.c.Do(ctx, http.MethodGet, "/v1/tools/catalog", nil, &cat); err != nil {
			return false
		}
		for _, tl := range cat.Tools {
			if tl.Name == "mcp__every__get-tiny-image" {
				return true
			}
		}
		return false
	})
	return d
}

// imageParts are the image parts of a request's messages.
func imageParts(req openai.ChatCompletionRequest) (urls []string, notes []string) {
	for _, m := range req.Messages {
		for _, p := range m.MultiContent {
			switch p.Type {
			case openai.ChatMessagePartTypeImageURL:
				urls = append(urls, p.ImageURL.URL)
			case openai.ChatMessagePartTypeText:
				notes = append(notes, p.Text)
			}
		}
	}
	return urls, notes
}

// TestMCPImageReachesModel: server-everything's get-tiny-image answers
// with a PNG; run through the real desktop runner, the tool's decision
// carries the image for the window, and the scripted model's next request
// carries it as an image part after the tool's result.
func TestMCPImageReachesModel(t *testing.T) {
	d := everythingDesktop(t, `{"rules":[{"tool":"mcp__every__get-tiny-image","action":"allow"}]}`)

	dec := d.runner.Run(context.Background(), "direct", api.ToolCall{ID: "direct-1", Name: "mcp__every__get-tiny-image", Arguments: []byte(`{}`)})
	if !dec.OK || len(dec.Media) != 1 || dec.Media[0].Type != "image" || dec.Media[0].MIMEType != "image/png" || !strings.HasPrefix(dec.Media[0].Data, "iVBOR") {
		t.Fatalf("the decision the window shows has no image: ok %v media %+v", dec.OK, dec.Media)
	}
	if !strings.Contains(dec.Result, "[image 1: image/png,") || !strings.Contains(dec.Result, "The image above is the MCP logo.") {
		t.Fatalf("result text %q", dec.Result)
	}

	sid := d.session(t)
	if err := d.app.Send(sid, `[[tool mcp__every__get-tiny-image {}]]`); err != nil {
		t.Fatal(err)
	}
	d.finalText(t, sid, "attached]")
	reqs := d.model.Requests()
	last := reqs[len(reqs)-1]
	urls, notes := imageParts(last)
	if len(urls) != 1 || !strings.HasPrefix(urls[0], "data:image/png;base64,iVBOR") {
		t.Fatalf("the model's request carries no image part: %d images", len(urls))
	}
	if len(notes) != 1 || notes[0] != llm.ToolImagesNote {
		t.Fatalf("the image's message says %q", notes)
	}
	n := len(last.Messages)
	if last.Messages[n-2].Role != openai.ChatMessageRoleTool || last.Messages[n-1].Role != openai.ChatMessageRoleUser {
		t.Fatalf("the image does not follow the tool's result: roles %s, %s", last.Messages[n-2].Role, last.Messages[n-1].Role)
	}

	// Reopened, the conversation's tool message still has the image, for
	// the card (frontend storedMedia).
	tr, err := d.app.Reload(sid)
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, m := range tr.Messages {
		var meta struct {
			Images []string `json:"images"`
		}
		if m.Role == "tool" && json.Unmarshal(m.Meta, &meta) == nil && len(meta.Images) == 1 && strings.HasPrefix(meta.Images[0], "data:image/png;base64,iVBOR") {
			kept = true
		}
	}
	if !kept {
		t.Fatalf("the reopened transcript's tool message has no image: %+v", tr.Messages)
	}
}

// TestMCPImageLeftOutForTextModel: a model that refuses image parts (400,
// as text-only servers answer) still gets the tool's result: the step is
// sent again without the image, and the result says the image was left out.
func TestMCPImageLeftOutForTextModel(t *testing.T) {
	d := everythingDesktop(t, `{"rules":[{"tool":"mcp__every__get-tiny-image","action":"allow"}]}`)
	d.model.SetNoImages(true)
	sid := d.session(t)
	if err := d.app.Send(sid, `[[tool mcp__every__get-tiny-image {}]]`); err != nil {
		t.Fatal(err)
	}
	d.finalText(t, sid, "the model was not sent this result's images")
	reqs := d.model.Requests()
	if urls, _ := imageParts(reqs[len(reqs)-1]); len(urls) != 0 {
		t.Fatalf("the last request still carries %d images", len(urls))
	}
}

// TestMCPPromptsForTheComposer: server-everything's prompts are listed for
// the composer's "/" menu with their arguments, and a prompt filled with
// the arguments the user typed gives the text the composer takes.
func TestMCPPromptsForTheComposer(t *testing.T) {
	d := everythingDesktop(t, "")
	p := NewMCPPanel(d.runner.mcp, func(string, any) {})
	var args *mcp.Prompt
	names := []string{}
	for _, pr := range p.MCPPrompts() {
		names = append(names, pr.Server+":"+pr.Name)
		if pr.Name == "args-prompt" {
			args = &pr
		}
	}
	if args == nil || !strings.Contains(strings.Join(names, " "), "every:simple-prompt") {
		t.Fatalf("prompts %v", names)
	}
	if len(args.Arguments) != 2 || args.Arguments[0].Name != "city" || !args.Arguments[0].Required || args.Arguments[1].Required || args.Title != "Arguments Prompt" {
		t.Fatalf("args-prompt %+v", *args)
	}
	text, err := p.MCPGetPrompt("every", "args-prompt", map[string]string{"city": "Lyon", "state": "Rhône"})
	if err != nil || text != "What's weather in Lyon, Rhône?" {
		t.Fatalf("filled: %q %v", text, err)
	}
	if _, err := p.MCPGetPrompt("every", "args-prompt", map[string]string{}); err == nil {
		t.Fatal("a missing required argument was accepted")
	}
	if _, err := p.MCPGetPrompt("nosuch", "x", nil); err == nil || !strings.Contains(err.Error(), `"nosuch" is not configured`) {
		t.Fatalf("unknown server: %v", err)
	}
}

// TestMCPResourcesListedAndAttached: server-everything's resources and
// templates are listed for the panel; a listed resource and a filled
// template are read as an attachment named by server and URI; sent as the
// window sends an attached file, the service counts it as untrusted
// content (its next tool call carries it in "untrusted").
func TestMCPResourcesListedAndAttached(t *testing.T) {
	d := everythingDesktop(t, "")
	p := NewMCPPanel(d.runner.mcp, func(string, any) {})
	var uri, tmpl string
	for _, r := range p.MCPResources() {
		if r.Server != "every" {
			t.Fatalf("resource of server %q", r.Server)
		}
		if uri == "" && strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			uri = r.URI
		}
		if r.URITemplate == "demo://resource/dynamic/text/{resourceId}" {
			tmpl = r.URITemplate
		}
	}
	if uri == "" || tmpl == "" {
		t.Fatalf("listed: %+v", p.MCPResources())
	}
	att, err := p.MCPReadResource("every", uri)
	if err != nil || att.Name != "MCP every "+uri || !strings.Contains(att.Content, "[resource "+uri) {
		t.Fatalf("read %s: %+v %v", uri, att, err)
	}
	filled, err := p.MCPReadResource("every", strings.Replace(tmpl, "{resourceId}", "3", 1))
	if err != nil || !strings.Contains(filled.Content, "Resource 3: This is a plaintext resource") {
		t.Fatalf("template: %+v %v", filled, err)
	}
	if _, err := p.MCPReadResource("every", "demo://no/such"); err == nil {
		t.Fatal("an unknown resource was read")
	}

	// As frontend/src/attach.ts puts an attached file in the message.
	sid := d.session(t)
	msg := "Attached file " + filled.Name + ":\n```\n" + filled.Content + "\n```\n\n" + `[[tool mcp__every__echo {"message":"hi"}]]`
	if err := d.app.Send(sid, msg); err != nil {
		t.Fatal(err)
	}
	pr := d.waitPrompt(t)
	if pr.Tool != "mcp__every__echo" || !strings.Contains(strings.Join(pr.Untrusted, "; "), filled.Name) {
		t.Fatalf("the prompt does not name the attached resource as untrusted: %+v", pr.Untrusted)
	}
	if err := d.app.ResolvePrompt(pr.ID, "deny", ""); err != nil {
		t.Fatal(err)
	}
}
