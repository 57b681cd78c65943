package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	acp "github.com/coder/acp-go-sdk"

	"jarvis/service/cliopts"
)

// client is Jarvis's side of the connection: it turns the agent's
// notifications into Events and its requests into Host calls, for the turn
// in progress. Outside a turn (or while a session/load replays history)
// updates are dropped and requests refused.
type client struct {
	root string
	log  *slog.Logger
	// modeChanged records the agent's own change of mode and returns the
	// session's choices (Agent.modeChanged).
	modeChanged func(string) Choices

	// emitMu is held while an event is delivered: end waits for it, so
	// no event reaches the caller after its turn.
	emitMu sync.Mutex

	mu     sync.Mutex
	ctx    context.Context
	host   Host
	emit   func(Event)
	replay bool
	// updates counts the session/update notifications handled.
	updates atomic.Int64
	titles  map[string]string // tool call id -> title
	calls   map[string]*call  // the turn's tool calls, by id
	denied  []string          // titles of the permission requests the user denied
	written map[string]bool   // the files Jarvis wrote for the agent this turn (fs/write_text_file)
	pending []context.CancelFunc
	terms   terminals // the commands run for the agent (terminal.go)
	// commands is the agent's latest list of slash commands, kept
	// outside turns too (agents send it right after session/new).
	commands []SlashCommand
}

func (c *client) availableCommands() []SlashCommand {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commands
}

var _ acp.Client = (*client)(nil)

func (c *client) begin(ctx context.Context, host Host, emit func(Event)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx, c.host, c.emit, c.titles, c.calls, c.denied, c.written = ctx, host, emit, map[string]string{}, map[string]*call{}, nil, map[string]bool{}
}

// call is what the turn knows of one tool call of the agent.
type call struct {
	title, kind string
	input       any
	ours        bool // it showed a terminal Jarvis ran: the gate has its row
	reported    bool
	diffs       []acp.ToolCallContentDiff // the file changes it reported, latest per path
	diffsShown  bool
}

// agentWarning is a warning an agent sends as a message chunk although it
// is not part of its reply: codex's "Model metadata for `m` not found.
// Defaulting to fallback metadata; …" line.
var agentWarning = regexp.MustCompile(`^Model metadata for .* not found\.`)

// hasCommand reports a tool input that carries a command line (codex
// labels `ls` "search" and `cat` "read", yet runs them as commands).
func hasCommand(input any) bool {
	m, ok := input.(map[string]any)
	if !ok {
		return false
	}
	_, cmd := m["command"]
	_, c2 := m["cmd"]
	return cmd || c2
}

// deniedTitles are the permission requests the user denied this turn.
func (c *client) deniedTitles() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.denied...)
}

// track updates the turn's record of a tool call and returns the command
// the agent ran itself when this update ends one (kind execute, no
// terminal of Jarvis's shown), once; nil otherwise.
func (c *client) track(id, title, kind string, input any, content []acp.ToolCallContent, status string) (*AgentTool, []Diff) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.calls == nil {
		return nil, nil
	}
	k := c.calls[id]
	if k == nil {
		k = &call{}
		c.calls[id] = k
	}
	if title != "" {
		k.title = title
	}
	if kind != "" {
		k.kind = kind
	}
	if input != nil {
		k.input = input
	}
	for _, ct := range content {
		if ct.Terminal != nil && c.terms.made(ct.Terminal.TerminalId) {
			k.ours = true
		}
		if d := ct.Diff; d != nil && d.Path != "" {
			k.diffs = slices.DeleteFunc(k.diffs, func(o acp.ToolCallContentDiff) bool { return o.Path == d.Path })
			k.diffs = append(k.diffs, *d)
		}
	}
	var diffs []Diff
	if status == string(acp.ToolCallStatusCompleted) && !k.diffsShown {
		k.diffsShown = true
		for _, d := range k.diffs {
			diffs = append(diffs, Diff{ToolCallID: id, Title: k.title, Path: d.Path, Old: d.OldText, New: d.NewText,
				Checkpointed: c.written[filepath.Clean(d.Path)]})
		}
	}
	ended := status == string(acp.ToolCallStatusCompleted) || status == string(acp.ToolCallStatusFailed)
	if !ended || k.reported || k.ours || (k.kind != string(acp.ToolKindExecute) && !hasCommand(k.input)) {
		return nil, diffs
	}
	k.reported = true
	t := &AgentTool{ID: id, Title: k.title, Kind: k.kind, OK: status == string(acp.ToolCallStatusCompleted)}
	if k.input != nil {
		if b, err := json.Marshal(k.input); err == nil {
			t.Input = b
		}
	}
	return t, diffs
}

func (c *client) end() {
	c.emitMu.Lock()
	defer c.emitMu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx, c.host, c.emit = nil, nil, nil
}

func (c *client) replaying(on bool) {
	c.mu.Lock()
	c.replay = on
	c.mu.Unlock()
}

// cancelPending ends the Host calls in flight: after session/cancel the
// client must answer pending permission requests with "cancelled".
func (c *client) cancelPending() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cancel := range c.pending {
		cancel()
	}
	c.pending = nil
}

// turn returns the current turn's host and a context for one call, or an
// error outside a turn.
func (c *client) turn(ctx context.Context) (Host, context.Context, context.CancelFunc, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.host == nil || c.replay {
		return nil, nil, nil, errors.New("no turn is in progress")
	}
	callCtx, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(ctx, cancel) // the agent cancelled the request
	c.pending = append(c.pending, cancel)
	return c.host, callCtx, func() { stop(); cancel() }, nil
}

func (c *client) publish(ev Event) {
	c.emitMu.Lock()
	defer c.emitMu.Unlock()
	c.mu.Lock()
	emit := c.emit
	if c.replay {
		emit = nil
	}
	c.mu.Unlock()
	if emit != nil {
		emit(ev)
	}
}

func (c *client) SessionUpdate(ctx context.Context, n acp.SessionNotification) error {
	defer c.updates.Add(1)
	u := n.Update
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil && t.Text != "" {
			if agentWarning.MatchString(t.Text) {
				c.publish(Event{Notice: strings.TrimSpace(t.Text)}) // a warning of the agent's, not its reply
				break
			}
			c.publish(Event{TextDelta: t.Text})
		}
	case u.AgentThoughtChunk != nil:
		if t := u.AgentThoughtChunk.Content.Text; t != nil && t.Text != "" {
			c.publish(Event{ThoughtDelta: t.Text})
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		c.mu.Lock()
		if c.titles != nil {
			c.titles[string(tc.ToolCallId)] = tc.Title
		}
		c.mu.Unlock()
		c.publish(Event{Status: toolStatus(tc.Title, string(tc.Kind), string(tc.Status))})
		t, diffs := c.track(string(tc.ToolCallId), tc.Title, string(tc.Kind), tc.RawInput, tc.Content, string(tc.Status))
		if t != nil {
			c.publish(Event{AgentTool: t})
		}
		c.publishDiffs(diffs)
	case u.ToolCallUpdate != nil:
		tu := u.ToolCallUpdate
		var title, kind, status string
		if tu.Title != nil {
			title = *tu.Title
		}
		if tu.Kind != nil {
			kind = string(*tu.Kind)
		}
		if tu.Status != nil {
			status = string(*tu.Status)
		}
		ran, diffs := c.track(string(tu.ToolCallId), title, kind, tu.RawInput, tu.Content, status)
		defer c.publishDiffs(diffs)
		if tu.Status == nil || (*tu.Status != acp.ToolCallStatusCompleted && *tu.Status != acp.ToolCallStatusFailed) {
			return nil // progress without a new state
		}
		if title == "" {
			c.mu.Lock()
			title = c.titles[string(tu.ToolCallId)]
			c.mu.Unlock()
		}
		c.publish(Event{Status: toolStatus(title, "", string(*tu.Status))})
		if ran != nil {
			c.publish(Event{AgentTool: ran})
		}
	case u.AvailableCommandsUpdate != nil:
		cmds := make([]SlashCommand, 0, len(u.AvailableCommandsUpdate.AvailableCommands))
		for _, ac := range u.AvailableCommandsUpdate.AvailableCommands {
			cmd := SlashCommand{Name: ac.Name, Description: ac.Description}
			if ac.Input != nil && ac.Input.Unstructured != nil {
				cmd.Hint = ac.Input.Unstructured.Hint
			}
			cmds = append(cmds, cmd)
		}
		c.mu.Lock()
		c.commands = cmds
		c.mu.Unlock()
		c.publish(Event{Commands: cmds})
	case u.CurrentModeUpdate != nil:
		if c.modeChanged != nil {
			ch := c.modeChanged(string(u.CurrentModeUpdate.CurrentModeId))
			c.publish(Event{Choices: &ch})
		}
	case u.Plan != nil:
		var plan []PlanEntry
		for _, e := range u.Plan.Entries {
			plan = append(plan, PlanEntry{Content: e.Content, Status: string(e.Status), Priority: string(e.Priority)})
		}
		c.publish(Event{Plan: plan})
	}
	return nil
}

// publishDiffs reports the file changes of a tool call that completed.
func (c *client) publishDiffs(diffs []Diff) {
	for i := range diffs {
		c.publish(Event{Diff: &diffs[i]})
	}
}

func toolStatus(title, kind, status string) string {
	if title == "" {
		title = "a tool"
	}
	s := "tool: " + title
	if kind != "" && kind != "other" {
		s += " (" + kind + ")"
	}
	if status != "" && status != "pending" {
		s += " — " + strings.ReplaceAll(status, "_", " ")
	}
	return s
}

func (c *client) RequestPermission(ctx context.Context, r acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	cancelled := acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}
	host, callCtx, done, err := c.turn(ctx)
	if err != nil {
		return cancelled, nil
	}
	defer done()
	p := Permission{ToolCallID: string(r.ToolCall.ToolCallId), RawInput: r.ToolCall.RawInput}
	if r.ToolCall.Title != nil {
		p.Title = *r.ToolCall.Title
	}
	if r.ToolCall.Kind != nil {
		p.Kind = string(*r.ToolCall.Kind)
	}
	for _, l := range r.ToolCall.Locations {
		p.Locations = append(p.Locations, l.Path)
	}
	c.mu.Lock()
	if p.Title == "" && c.titles != nil {
		p.Title = c.titles[p.ToolCallID]
	}
	c.mu.Unlock()
	allowed, err := host.RequestPermission(callCtx, p)
	if callCtx.Err() != nil {
		return cancelled, nil // Stop: pending requests answer "cancelled"
	}
	if !allowed || err != nil {
		title := p.Title
		if title == "" {
			title = "a tool call"
		}
		c.mu.Lock()
		c.denied = append(c.denied, title)
		c.mu.Unlock()
	}
	// Allow once at most: "always" would let the agent skip Jarvis's gate
	// next time; the gate keeps its own "always" rules.
	want := []acp.PermissionOptionKind{acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways}
	if allowed && err == nil {
		want = []acp.PermissionOptionKind{acp.PermissionOptionKindAllowOnce}
	}
	for _, k := range want {
		for _, o := range r.Options {
			if o.Kind == k {
				return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: o.OptionId}}}, nil
			}
		}
	}
	return cancelled, nil // no option fits: nothing is allowed
}

// confine resolves path inside the working folder, or refuses it.
func (c *client) confine(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", acp.NewInvalidParams(map[string]any{"error": "the path must be absolute", "path": path})
	}
	clean := filepath.Clean(path)
	// Symlinks are resolved as far as the path exists: a link inside the
	// folder must not lead outside it.
	real := clean
	for dir, rest := clean, ""; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			real = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
	root := c.root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if real != root && !strings.HasPrefix(real, root+string(os.PathSeparator)) {
		return "", acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("%s is outside the agent's working folder %s", path, c.root)})
	}
	return clean, nil
}

func (c *client) ReadTextFile(ctx context.Context, r acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	path, err := c.confine(r.Path)
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	host, callCtx, done, err := c.turn(ctx)
	if err != nil {
		return acp.ReadTextFileResponse{}, err
	}
	defer done()
	line, limit := 0, 0
	if r.Line != nil {
		line = *r.Line
	}
	if r.Limit != nil {
		limit = *r.Limit
	}
	text, err := host.ReadTextFile(callCtx, path, line, limit)
	if err != nil {
		return acp.ReadTextFileResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	return acp.ReadTextFileResponse{Content: text}, nil
}

func (c *client) WriteTextFile(ctx context.Context, r acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	path, err := c.confine(r.Path)
	if err != nil {
		return acp.WriteTextFileResponse{}, err
	}
	host, callCtx, done, err := c.turn(ctx)
	if err != nil {
		return acp.WriteTextFileResponse{}, err
	}
	defer done()
	if err := host.WriteTextFile(callCtx, path, r.Content); err != nil {
		return acp.WriteTextFileResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	c.mu.Lock()
	if c.written != nil {
		c.written[path] = true
	}
	c.mu.Unlock()
	return acp.WriteTextFileResponse{}, nil
}

// describe turns an error from the agent into words: a JSON-RPC error's
// message and details, not its JSON; else the first meaningful line of the
// agent's stderr.
func describe(err error, stderr string) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		msg := re.Message
		if d := detail(re.Data); d != "" {
			msg += ": " + d
		}
		if line := firstLine(stderr); line != "" && re.Code == -32603 {
			// An internal error's cause is the agent's first complaint
			// (claude-code-acp as root: "--dangerously-skip-permissions
			// cannot be used with root/sudo privileges"), not the dump of
			// the request that follows it.
			msg += " (the agent printed: " + line + ")"
		}
		return msg
	}
	if err != nil {
		return err.Error()
	}
	return cliopts.FirstErrorLine(stderr)
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

func detail(data any) string {
	switch d := data.(type) {
	case nil:
		return ""
	case string:
		return d
	case map[string]any:
		for _, k := range []string{"details", "message", "error"} {
			if s, ok := d[k].(string); ok && s != "" {
				return s
			}
		}
	}
	b, _ := json.Marshal(data)
	return string(b)
}

// authHint describes a sign-in method and what to run for it.
func authHint(m acp.AuthMethod) string {
	var id, name, desc string
	switch {
	case m.EnvVar != nil:
		var vars []string
		for _, v := range m.EnvVar.Vars {
			vars = append(vars, v.Name)
		}
		return fmt.Sprintf("%s: set %s in the agent's chat.env (a keyring secret)", m.EnvVar.Name, strings.Join(vars, " and "))
	case m.Terminal != nil:
		id, name = m.Terminal.Id, m.Terminal.Name
		if m.Terminal.Description != nil {
			desc = *m.Terminal.Description
		}
	case m.Agent != nil:
		id, name = m.Agent.Id, m.Agent.Name
		if m.Agent.Description != nil {
			desc = *m.Agent.Description
		}
	}
	s := name
	if s == "" {
		s = id
	}
	if desc != "" {
		s += " (" + desc + ")"
	}
	switch {
	case strings.Contains(id, "claude"):
		s += ": run `claude /login` in a terminal"
	case id == "chatgpt":
		s += ": run `codex login` in a terminal"
	case strings.HasSuffix(id, "api-key") || strings.HasSuffix(id, "API_KEY"):
		s += ": set " + strings.ToUpper(strings.ReplaceAll(strings.TrimSuffix(id, "-api-key"), "-", "_")) + "_API_KEY in the agent's chat.env"
	}
	return s
}
