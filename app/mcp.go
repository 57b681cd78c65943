package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"jarvis/api"
	"jarvis/app/mcp"
)

// SyncMCPCatalog tells the service the MCP tools models may be offered
// (PUT /v1/tools/catalog) now and after every change of the Manager's
// catalogue (a server ready or gone, tools/list_changed, a switch, an
// approval), until ctx ends. A failed PUT is retried every second: the
// service may still be starting. A service that restarted while the
// desktop stayed attached starts with an empty catalogue: the catalogue is
// sent again at once when a session's stream reconnects (the App calls
// Manager.Resync), and every check (default 5 s) it is read back (GET) and
// sent again when it differs, for a service no stream follows.
func SyncMCPCatalog(ctx context.Context, c *api.Client, m *mcp.Manager, log *slog.Logger, check time.Duration) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if check <= 0 {
		check = 5 * time.Second
	}
	tick := time.NewTicker(check)
	defer tick.Stop()
	var sent []byte
	for {
		ch, again := m.Changed(), m.ResyncWanted()
		cat := CatalogOf(m.Catalogue())
		b, _ := json.Marshal(cat)
		if string(b) != string(sent) {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := c.PutToolCatalog(rctx, cat)
			cancel()
			if err == nil {
				sent = b
				log.Info("mcp: tool catalogue sent to the service", "tools", len(cat.Tools))
			} else if ctx.Err() == nil {
				log.Warn("mcp: sending the tool catalogue failed; retrying", "err", err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				continue
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ch:
		case <-again:
			log.Info("mcp: a stream to the service reconnected; sending the tool catalogue again", "tools", len(cat.Tools))
			sent = nil
		case <-tick.C:
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			var have api.ToolCatalog
			err := c.Do(rctx, http.MethodGet, "/v1/tools/catalog", nil, &have)
			cancel()
			if err == nil && !sameTools(have, cat) {
				log.Info("mcp: the service's tool catalogue differs from the desktop's (the service restarted?); sending it again",
					"service_tools", len(have.Tools), "tools", len(cat.Tools))
				sent = nil
			}
		}
	}
}

// sameTools reports whether the service holds the tools of cat, by name.
func sameTools(have, cat api.ToolCatalog) bool {
	if len(have.Tools) != len(cat.Tools) {
		return false
	}
	names := make(map[string]bool, len(cat.Tools))
	for _, t := range cat.Tools {
		names[t.Name] = true
	}
	for _, t := range have.Tools {
		if !names[t.Name] {
			return false
		}
	}
	return true
}

// CatalogOf is the wire form of the Manager's enabled tools.
func CatalogOf(ts []mcp.Tool) api.ToolCatalog {
	out := api.ToolCatalog{Tools: make([]api.CatalogTool, 0, len(ts))}
	for _, t := range ts {
		desc := t.Description
		if t.Title != "" && desc == "" {
			desc = t.Title
		}
		out.Tools = append(out.Tools, api.CatalogTool{Name: t.Name, Description: desc, Parameters: t.InputSchema,
			Capabilities: []string{"mcp." + t.Server}})
	}
	return out
}

// MCPPanel is the window's MCP panel binding: the servers with their state
// and tools, the per-tool switch and the approval of a changed definition.
// Main binds it beside the App.
type MCPPanel struct {
	m    *mcp.Manager
	emit func(string, any)

	mu     sync.Mutex
	asking map[string]chan *sdk.ElicitResult // elicitation id → its answer
	askSeq int
	open   func(path string) error // MCPOpenConfig's launcher (WithOpener)
}

// WithOpener gives the panel what opens mcp.json with the desktop's default
// handler (Runner.OpenPath). A function, not a method: the window must not
// be able to call it through the bindings.
func WithOpener(p *MCPPanel, open func(path string) error) { p.open = open }

// MCPOpenConfig opens mcp.json with the desktop's default handler (the
// panel's "Open mcp.json"). An edit made there waits for the user's
// approval in the panel before any server it adds or changes starts.
func (p *MCPPanel) MCPOpenConfig() error {
	if p.open == nil {
		return errors.New("this window cannot open files")
	}
	path := p.m.ConfigPath()
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s does not exist yet: add a server here first", path)
	}
	return p.open(path)
}

// MCPState is what the panel shows.
type MCPState struct {
	Servers     []mcp.ServerStatus `json:"servers"`
	ConfigError string             `json:"configError,omitempty"`
	ConfigPath  string             `json:"configPath"`
}

// NewMCPPanel returns the panel's binding; emit sends "mcp:servers" and
// "mcp:elicit". From now on the servers' elicitation requests are asked of
// the user in the window (a headless Jarvis has no panel: it declines).
func NewMCPPanel(m *mcp.Manager, emit func(string, any)) *MCPPanel {
	p := &MCPPanel{m: m, emit: emit, asking: map[string]chan *sdk.ElicitResult{}}
	m.SetElicit(p.elicit)
	return p
}

// MCPElicitation is a server's request for the user's input, as the window
// shows it ("mcp:elicit"): a form built from Schema (flat: strings,
// numbers, booleans, enums), or a URL to open on the user's click.
type MCPElicitation struct {
	ID      string `json:"id"`
	Server  string `json:"server"` // the name as written in mcp.json
	Mode    string `json:"mode"`   // form | url
	Message string `json:"message"`
	Schema  any    `json:"schema,omitempty"`
	URL     string `json:"url,omitempty"`
}

// elicit asks the user in the window and waits for the answer
// (MCPElicitAnswer); the server giving up (its request's context) takes the
// dialog away ("mcp:elicit-done").
func (p *MCPPanel) elicit(ctx context.Context, server string, e *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	mode := e.Mode
	if mode == "" {
		mode = "form"
	}
	ch := make(chan *sdk.ElicitResult, 1)
	p.mu.Lock()
	p.askSeq++
	id := fmt.Sprintf("elicit-%d", p.askSeq)
	p.asking[id] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.asking, id)
		p.mu.Unlock()
	}()
	p.emit("mcp:elicit", MCPElicitation{ID: id, Server: server, Mode: mode, Message: e.Message, Schema: e.RequestedSchema, URL: e.URL})
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		p.emit("mcp:elicit-done", id)
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
}

// MCPElicitAnswer is the user's answer to an elicitation: "accept" (with
// the form's content; for a URL, the user opened it), "decline" or
// "cancel" (the dialog closed). The server checks the content against the
// schema it sent.
func (p *MCPPanel) MCPElicitAnswer(id, action string, content map[string]any) error {
	switch action {
	case "accept":
	case "decline", "cancel":
		content = nil
	default:
		return fmt.Errorf("unknown answer %q (accept, decline or cancel)", action)
	}
	p.mu.Lock()
	ch, ok := p.asking[id]
	delete(p.asking, id)
	p.mu.Unlock()
	if !ok {
		return errors.New("the server no longer waits for this answer")
	}
	ch <- &sdk.ElicitResult{Action: action, Content: content}
	return nil
}

// MCPServers returns the servers, their tools and the configuration error.
func (p *MCPPanel) MCPServers() MCPState {
	ss, cerr := p.m.Servers()
	return MCPState{Servers: ss, ConfigError: cerr, ConfigPath: p.m.ConfigPath()}
}

// MCPApproveTool accepts a changed tool definition (it is enabled again):
// hash is the one the panel displayed; a definition changed since is
// refused.
func (p *MCPPanel) MCPApproveTool(name, hash string) error { return p.m.Approve(name, hash) }

// MCPApproveConfig approves mcp.json as the panel showed it (entries made
// or changed outside Jarvis wait for it): hash is the one displayed with
// what the waiting entries would start; a file changed since is refused.
func (p *MCPPanel) MCPApproveConfig(hash string) error { return p.m.ApproveConfig(hash) }

// MCPAddServer adds a server to mcp.json (entry is its JSON object, as in
// the file); added here, it starts without a second confirmation.
func (p *MCPPanel) MCPAddServer(name, entry string) error {
	return p.m.AddServer(name, json.RawMessage(entry))
}

// MCPPrompts lists the prompts of the ready servers: the composer's "/"
// menu offers each as "/server:name".
func (p *MCPPanel) MCPPrompts() []mcp.Prompt {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.m.Prompts(ctx)
}

// MCPGetPrompt fills a server's prompt with the arguments the user typed
// in the composer's small form and returns the text the composer takes:
// the prompt's one message, or each message under its role. It is put in
// the composer, not sent: the user reads what the server wrote first.
func (p *MCPPanel) MCPGetPrompt(server, name string, args map[string]string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msgs, err := p.m.GetPrompt(ctx, server, name, args)
	if err != nil {
		return "", err
	}
	if len(msgs) == 1 && msgs[0].Role == "user" {
		return msgs[0].Text, nil
	}
	parts := make([]string, 0, len(msgs))
	for _, m := range msgs {
		parts = append(parts, m.Role+": "+m.Text)
	}
	return strings.Join(parts, "\n\n"), nil
}

// MCPResources lists the resources and resource templates of the ready
// servers, for the panel.
func (p *MCPPanel) MCPResources() []mcp.Resource {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return p.m.Resources(ctx)
}

// MCPResourceAttachment is a resource read for the composer. The window
// attaches it like a text file (frontend/src/attach.ts), so it reaches the
// model as an attachment, marked untrusted under its name: the server and
// the URI.
type MCPResourceAttachment struct {
	Name    string `json:"name"`
	Content string `json:"content"`
}

// MCPReadResource reads a server's resource (a listed URI, or a template
// the user filled in) for the user to attach to a message.
func (p *MCPPanel) MCPReadResource(server, uri string) (MCPResourceAttachment, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	text, err := p.m.ReadResource(ctx, server, strings.TrimSpace(uri))
	if err != nil {
		return MCPResourceAttachment{}, err
	}
	return MCPResourceAttachment{Name: "MCP " + server + " " + strings.TrimSpace(uri), Content: text}, nil
}

// MCPRestartServer stops a server and starts it again.
func (p *MCPPanel) MCPRestartServer(name string) error { return p.m.Restart(name) }

// MCPSetSecret stores a secret for one server: what "${keyring:NAME}" in
// that server's entry resolves to.
func (p *MCPPanel) MCPSetSecret(server, name, value string) error {
	return p.m.SetSecret(server, name, value)
}

// MCPSignIn starts signing in to a server that asks for it (OAuth) and
// returns the authorization URL, which the window opens in the browser;
// the sign-in goes on until the browser comes back to Jarvis (at most
// five minutes), then the server starts again. A failure before the URL is
// known is returned; one after it is shown on the server (signInError).
func (p *MCPPanel) MCPSignIn(name string) (string, error) {
	urlc, errc := make(chan string, 1), make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), signInWait)
		defer cancel()
		errc <- p.m.SignIn(ctx, name, func(u string) { urlc <- u })
	}()
	select {
	case u := <-urlc:
		return u, nil
	case err := <-errc:
		return "", err
	}
}

// signInWait is how long a sign-in waits for the browser.
const signInWait = 5 * time.Minute

// MCPSignOut forgets a server's sign-in.
func (p *MCPPanel) MCPSignOut(name string) error { return p.m.SignOut(name) }

// MCPSetToolEnabled is a tool's switch.
func (p *MCPPanel) MCPSetToolEnabled(name string, on bool) error { return p.m.SetToolEnabled(name, on) }

// MCPSetServerEnabled is a server's switch ("disabled" in mcp.json).
func (p *MCPPanel) MCPSetServerEnabled(name string, on bool) error {
	return p.m.SetServerEnabled(name, on)
}

// WatchMCP emits "mcp:servers" with the panel's whole state on every
// change until ctx ends. A function, not a method: the window must not be
// able to call it through the bindings.
func WatchMCP(ctx context.Context, p *MCPPanel) {
	for {
		ch := p.m.Changed()
		p.emit("mcp:servers", p.MCPServers())
		select {
		case <-ctx.Done():
			return
		case <-ch:
		}
	}
}

// serviceBack is called when a session's stream reconnected: the service
// may have restarted and lost the MCP catalogue, so the runner's MCP
// Manager (when it has one) is asked to send it again.
func (a *App) serviceBack() {
	if r, ok := a.tools.(*Runner); ok && r.mcp != nil {
		r.mcp.Resync()
	}
}
