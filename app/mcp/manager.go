// Package mcp is the desktop's Model Context Protocol client: it owns the
// MCP servers of mcp.json (Claude Desktop's "mcpServers" shape), keeps each
// connected (stdio child processes in their own process group with a
// scrubbed environment, or Streamable HTTP), restarts them with backoff,
// lists their tools into one catalogue (live on tools/list_changed), pins
// each tool's definition by hash (a changed definition is disabled until
// the user approves it), and runs calls with a timeout, progress and
// cancellation. It decides nothing: the gate (app/gate) judges every call
// through Assess and runs it through Call; the service only offers the
// catalogue to models as mcp__<server>__<tool>.
package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"jarvis/internal/approved"
	"jarvis/service/injection"
	"jarvis/tools"
)

// Prefix starts the name of every MCP tool as models see it.
const Prefix = "mcp__"

// IsToolName reports whether name is an MCP tool's (mcp__<server>__<tool>).
func IsToolName(name string) bool { return strings.HasPrefix(name, Prefix) }

// ToolName is the name models see for a server's tool.
func ToolName(server, tool string) string { return Prefix + server + "__" + tool }

// splitName returns the server and tool of an mcp__ name.
func splitName(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, "__")
}

// toolNameOK: the model-facing name must fit OpenAI's function names.
var toolNameOK = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Options configures a Manager.
type Options struct {
	ConfigPath string // mcp.json; watched for changes
	StatePath  string // the pins and the per-tool switches (JSON, 0600); "" keeps them in memory
	Logger     *slog.Logger
	// Secret resolves "${keyring:NAME}" values of env and headers: it is
	// asked only for SecretRef(server, NAME) and returns an error wrapping
	// secrets.ErrNotFound when nothing is stored under it (secrets.Store.Get).
	Secret func(ref string) (string, error)
	// SetSecret stores a server's secret (the panel's and `jarvis mcp
	// secret set`'s write), under SecretRef.
	SetSecret   func(ref, value string) error
	HTTPClient  *http.Client  // for Streamable HTTP servers
	InitTimeout time.Duration // initialize and the first tools/list; default 30 s
	Backoff     time.Duration // first pause before a restart; default 1 s
	ResultCap   int           // bytes of a result handed to the model; default 64 KiB
	// Roots are the folders offered to servers as the client's roots
	// (roots/list): the workspace, and nothing else.
	Roots []string
	// Elicit answers a server's elicitation/create (a form or a URL to
	// open, asked of the user); server is the name as written. Nil: every
	// request is declined and logged, which is also the answer of a
	// headless Jarvis. SetElicit sets it later (the window's panel).
	Elicit func(ctx context.Context, server string, p *sdk.ElicitParams) (*sdk.ElicitResult, error)
	// Inspect: read and judge the configuration, start nothing (`jarvis mcp`
	// in a terminal while no Jarvis runs).
	Inspect bool
	// Approved is the store of approved contents: an entry of mcp.json runs
	// only as it was last approved (approval.go). Nil: only entries given
	// to Apply by the program itself (Trust) run.
	Approved *approved.Store
	// Confine wraps a stdio server's command, built with its environment
	// and folder, in the sandbox; it returns the command to start and what
	// to do once the server has stopped. nil: servers run unconfined.
	Confine func(cfg ServerConfig, cmd *exec.Cmd) (*exec.Cmd, func(), error)
}

// Tool is one catalogue entry.
type Tool struct {
	Name        string          `json:"name"` // mcp__<server>__<tool>
	Server      string          `json:"server"`
	Tool        string          `json:"tool"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	ReadOnly    bool            `json:"readOnly,omitempty"`
	Destructive bool            `json:"destructive,omitempty"`
	// Outbound says where a call sends data when the server is remote or
	// the tool says it reaches the open world (openWorldHint): the gate
	// asks before such a call once untrusted content is in the turn.
	Outbound string `json:"outbound,omitempty"`
	Hash     string `json:"hash"`
	// Enabled: offered to models and callable. Off when the user switched
	// it off, or when its definition changed since it was pinned
	// (Changed) and the user has not approved the new one.
	Enabled bool `json:"enabled"`
	Changed bool `json:"changed,omitempty"`
	Off     bool `json:"off,omitempty"`
	schema  *compiledSchema
	// resource: Jarvis's ReadResourceTool, not one of the server's tools.
	resource bool
}

// ServerStatus is one server as the panel shows it.
type ServerStatus struct {
	Name      string `json:"name"`
	Label     string `json:"label"`     // the name as written in mcp.json
	Transport string `json:"transport"` // stdio | http | sse
	State     string `json:"state"`     // starting | ready | failed | off | approval | invalid
	Error     string `json:"error,omitempty"`
	Restarts  int    `json:"restarts"`
	Tools     []Tool `json:"tools"`
	// Approval: the entry waits for the user's approval (StateApproval).
	Approval *Approval `json:"approval,omitempty"`
	// Warnings: keys of the entry Jarvis ignored.
	Warnings []string `json:"warnings,omitempty"`
	// Log: the server's last log notifications ("level logger: message").
	Log []string `json:"log,omitempty"`
	// SignIn: the server is reached at a url, so it may ask for a sign-in
	// (the panel's Sign in / Sign out). SignedIn: a sign-in is stored.
	// SigningIn: one is under way (waiting for the browser).
	SignIn    bool `json:"signIn,omitempty"`
	SignedIn  bool `json:"signedIn,omitempty"`
	SigningIn bool `json:"signingIn,omitempty"`
	// SignInError: why the last sign-in did not succeed.
	SignInError string `json:"signInError,omitempty"`
}

// Progress is one progress notification of a running call.
type Progress struct {
	Call     string  `json:"call"` // the tool call's id
	Tool     string  `json:"tool"`
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// Manager owns the configured servers. Safe for concurrent use.
type Manager struct {
	opts Options
	log  *slog.Logger
	det  *injection.Detector

	mu        sync.Mutex
	servers   map[string]*server
	catalogue map[string]*Tool // by model-facing name
	state     persisted
	cfgErr    string
	approved  map[string]string // server → ApprovalHash of its approved entry
	fileHash  string            // approved.Hash of the mcp.json applied last
	subs      []chan struct{}
	resync    []chan struct{}
	calls     map[string]func(Progress) // progress token → sink
	smp       sampling                  // servers' requests for a completion (sampling.go)
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	seq       atomic.Int64
}

// New makes a Manager; Start starts its servers.
func New(opts Options) (*Manager, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.InitTimeout <= 0 {
		opts.InitTimeout = 30 * time.Second
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.ResultCap <= 0 {
		opts.ResultCap = 64 << 10
	}
	st, err := loadState(opts.StatePath)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{opts: opts, log: opts.Logger, det: injection.New(), servers: map[string]*server{},
		catalogue: map[string]*Tool{}, state: st, approved: map[string]string{}, calls: map[string]func(Progress){}, ctx: ctx, cancel: cancel}, nil
}

// Start reads the configuration, starts its servers and, with a
// ConfigPath, reloads on every change of the file. A configuration error
// is reported by Servers (and returned) and leaves the running servers be.
// The folder of the file is watched, or, while it does not exist, its
// nearest existing parent, down to the folder once it is made.
func (m *Manager) Start() error {
	if m.opts.ConfigPath == "" {
		return m.Reload()
	}
	w, werr := fsnotify.NewWatcher()
	if werr != nil {
		return errors.Join(m.Reload(), werr)
	}
	// Watching before the first read: a change in between is not missed.
	watching := m.watchDir()
	if err := w.Add(watching); err != nil {
		m.log.Warn("mcp: not watching the config folder", "dir", watching, "err", err)
		watching = ""
	}
	err := m.Reload()
	m.wg.Add(1)
	go m.watch(w, watching)
	return err
}

// watchDir is the folder to watch for the config file: its own, or the
// nearest existing parent.
func (m *Manager) watchDir() string {
	dir := filepath.Dir(m.opts.ConfigPath)
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return dir
		}
		dir = up
	}
}

func (m *Manager) watch(w *fsnotify.Watcher, watching string) {
	defer m.wg.Done()
	defer w.Close()
	// follow watches watchDir (the file's folder once it exists); it
	// reports whether it moved, so a file made meanwhile is read.
	follow := func() bool {
		dir := m.watchDir()
		if dir == watching {
			return false
		}
		if err := w.Add(dir); err != nil {
			m.log.Warn("mcp: not watching the config folder", "dir", dir, "err", err)
			return false
		}
		if watching != "" {
			w.Remove(watching)
		}
		watching = dir
		return true
	}
	var debounce <-chan time.Time
	for {
		select {
		case <-m.ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			// The folder, not the file: editors replace files by renaming.
			if filepath.Clean(ev.Name) == filepath.Clean(m.opts.ConfigPath) || follow() {
				debounce = time.After(150 * time.Millisecond)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			m.log.Warn("mcp: config watch", "err", err)
		case <-debounce:
			if follow() {
				debounce = time.After(150 * time.Millisecond)
				continue
			}
			if err := m.Reload(); err != nil {
				m.log.Warn("mcp: config not reloaded", "err", err)
			}
		}
	}
}

// Reload applies the configuration file: new servers start, removed ones
// stop, changed ones restart.
func (m *Manager) Reload() error {
	var cfg Config
	var err error
	var b []byte
	if m.opts.ConfigPath != "" {
		b, err = os.ReadFile(m.opts.ConfigPath)
		if errors.Is(err, os.ErrNotExist) {
			b, err = nil, nil
		}
		if err == nil {
			cfg, err = ParseConfig(m.opts.ConfigPath, b)
		}
	}
	var ok map[string]string
	if err == nil {
		ok, err = m.approvedEntries()
	}
	m.mu.Lock()
	if err != nil {
		m.cfgErr = err.Error()
		m.mu.Unlock()
		m.changed()
		return err
	}
	m.cfgErr = ""
	m.approved, m.fileHash = ok, approved.Hash(b)
	m.mu.Unlock()
	m.Apply(cfg)
	return nil
}

// Trust marks cfg's entries as approved, for a program that builds its
// configuration itself rather than reading mcp.json, and returns cfg.
func (m *Manager) Trust(cfg Config) Config {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, sc := range cfg.Servers {
		m.approved[sc.Name] = ApprovalHash(sc)
	}
	return cfg
}

// Apply runs exactly the servers of cfg: new servers start, removed ones
// stop, changed ones restart; an entry the user has not approved as it is
// now waits in StateApproval (approval.go).
func (m *Manager) Apply(cfg Config) {
	want := map[string]ServerConfig{}
	for _, sc := range cfg.Servers {
		want[sc.Name] = sc
	}
	m.mu.Lock()
	var stop []*server
	for name, s := range m.servers {
		sc, ok := want[name]
		// An approval given or withdrawn (a reload of the approved file)
		// changes a valid entry as much as an edit does.
		approvalChanged := sc.Problem == "" && (s.approval == nil) != (m.approved[name] == ApprovalHash(sc))
		if !ok || !sameConfig(sc, s.cfg) || approvalChanged {
			stop = append(stop, s)
			delete(m.servers, name)
		}
	}
	var start []*server
	var pending []*server
	for name, sc := range want {
		if _, ok := m.servers[name]; ok {
			continue
		}
		s := &server{m: m, cfg: sc, stderr: &tail{max: 4096}, done: make(chan struct{}), state: StateOff}
		m.servers[name] = s
		for _, w := range sc.Warnings {
			m.log.Warn("mcp: "+w, "server", sc.Label)
		}
		if sc.Problem != "" {
			s.state, s.err = StateInvalid, sc.Problem
			m.log.Warn("mcp: server not started: its entry cannot run as written", "server", sc.Label, "problem", sc.Problem)
			continue
		}
		if prior := m.approved[name]; prior != ApprovalHash(sc) {
			s.state, s.approval = StateApproval, approvalOf(sc, prior, m.fileHash)
			pending = append(pending, s)
			continue
		}
		if !sc.Disabled && !m.state.ServersOff[name] && !m.opts.Inspect {
			ctx, cancel := context.WithCancel(m.ctx)
			s.ctx, s.cancel = ctx, cancel
			start = append(start, s)
		}
	}
	m.mu.Unlock()
	for _, s := range stop {
		m.stopServer(s)
	}
	for _, s := range pending {
		a := s.approval
		m.log.Warn("mcp: server not started: its entry in mcp.json was not made or approved in Jarvis; approve it in the MCP panel or with: jarvis mcp approve "+s.cfg.Name,
			"server", s.cfg.Name, "would_run", a.Launch, "changed", a.Changed, "hash", a.Hash)
	}
	for _, s := range start {
		m.wg.Add(1)
		go func() { defer m.wg.Done(); s.run(s.ctx) }()
	}
	m.changed()
}

func sameConfig(a, b ServerConfig) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y) && a.Problem == b.Problem && a.Label == b.Label
}

func (m *Manager) stopServer(s *server) {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	m.mu.Lock()
	for k, t := range m.catalogue {
		if t.Server == s.cfg.Name {
			delete(m.catalogue, k)
		}
	}
	m.mu.Unlock()
}

// ValidSecretName reports whether server and name can name a server's
// secret (SecretRef).
func ValidSecretName(server, name string) bool {
	return serverName.MatchString(server) && secretName.MatchString(name)
}

// SetSecret stores value as server's secret name (what "${keyring:name}"
// in that server's entry resolves) and starts the server again if it runs.
func (m *Manager) SetSecret(server, name, value string) error {
	if !serverName.MatchString(server) {
		return fmt.Errorf("server name %q: use 1-32 letters, digits, '-' or '_'", server)
	}
	if !secretName.MatchString(name) {
		return fmt.Errorf("secret name %q: use 1-64 letters, digits, '.', '-' or '_'", name)
	}
	if value == "" {
		return errors.New("the secret is empty")
	}
	if m.opts.SetSecret == nil {
		return errors.New("this Jarvis has no secret store")
	}
	if err := m.opts.SetSecret(SecretRef(server, name), value); err != nil {
		return err
	}
	m.log.Info("mcp: secret stored for a server", "server", server, "name", name)
	m.Restart(server)
	return nil
}

// Restart stops a configured server and starts it again (the panel's
// Restart); one switched off or waiting for approval stays so.
func (m *Manager) Restart(name string) error { return m.restart(name) }

// SetElicit sets who answers servers' elicitation requests from now on
// (Options.Elicit): the window's dialog.
func (m *Manager) SetElicit(f func(ctx context.Context, server string, p *sdk.ElicitParams) (*sdk.ElicitResult, error)) {
	m.mu.Lock()
	m.opts.Elicit = f
	m.mu.Unlock()
}

// ConfigPath is the mcp.json the Manager reads.
func (m *Manager) ConfigPath() string { return m.opts.ConfigPath }

// SetServerEnabled is a server's switch: off stops it and takes its tools
// out of the catalogue; on starts it.
func (m *Manager) SetServerEnabled(name string, on bool) error {
	m.mu.Lock()
	if _, ok := m.servers[name]; !ok {
		m.mu.Unlock()
		return fmt.Errorf("no MCP server %q", name)
	}
	if on {
		delete(m.state.ServersOff, name)
	} else {
		m.state.ServersOff[name] = true
	}
	snap := m.state.clone()
	m.mu.Unlock()
	if err := m.restart(name); err != nil {
		return err
	}
	return saveState(m.opts.StatePath, snap)
}

// restart stops server name and applies its entry again (started, kept
// off, or waiting for approval).
func (m *Manager) restart(name string) error {
	m.mu.Lock()
	s, ok := m.servers[name]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("no MCP server %q", name)
	}
	delete(m.servers, name)
	all := Config{}
	for _, o := range m.servers {
		all.Servers = append(all.Servers, o.cfg)
	}
	all.Servers = append(all.Servers, s.cfg)
	m.mu.Unlock()
	m.stopServer(s)
	m.Apply(all)
	return nil
}

// Close stops every server.
func (m *Manager) Close() error {
	m.cancel()
	for _, s := range m.serverList() {
		m.stopServer(s)
	}
	m.wg.Wait()
	return nil
}

// Changed returns a channel closed at the next change of the servers or
// the catalogue.
func (m *Manager) Changed() <-chan struct{} {
	ch := make(chan struct{})
	m.mu.Lock()
	m.subs = append(m.subs, ch)
	m.mu.Unlock()
	return ch
}

// Resync asks whoever hands the catalogue on (app.SyncMCPCatalog) to send
// it again although nothing changed here: its receiver may have lost it (a
// service that restarted).
func (m *Manager) Resync() { m.wake(&m.resync) }

// ResyncWanted returns a channel closed at the next Resync.
func (m *Manager) ResyncWanted() <-chan struct{} {
	ch := make(chan struct{})
	m.mu.Lock()
	m.resync = append(m.resync, ch)
	m.mu.Unlock()
	return ch
}

func (m *Manager) changed() { m.wake(&m.subs) }

// wake closes the channels waiting in *list (guarded by m.mu) and empties it.
func (m *Manager) wake(list *[]chan struct{}) {
	m.mu.Lock()
	subs := *list
	*list = nil
	m.mu.Unlock()
	for _, ch := range subs {
		close(ch)
	}
}

// toolsListed replaces a server's tools in the catalogue, pinning each
// definition the first time it is seen.
func (m *Manager) toolsListed(serverName string, list []*sdk.Tool, resources bool) {
	m.mu.Lock()
	prev := map[string]*Tool{}
	for k, t := range m.catalogue {
		if t.Server == serverName {
			prev[k] = t
			delete(m.catalogue, k)
		}
	}
	var dropped []*Tool
	pinsChanged := false
	for _, st := range list {
		name := ToolName(serverName, st.Name)
		if !toolNameOK.MatchString(name) {
			m.log.Warn("mcp: tool skipped: its name does not fit a model's tool names", "server", serverName, "tool", st.Name)
			continue
		}
		schema, _ := json.Marshal(st.InputSchema)
		t := &Tool{Name: name, Server: serverName, Tool: st.Name, Title: st.Title, Description: st.Description, InputSchema: schema}
		if a := st.Annotations; a != nil {
			t.ReadOnly = a.ReadOnlyHint
			t.Destructive = a.DestructiveHint == nil || *a.DestructiveHint // the spec's default is true
			if t.Title == "" {
				t.Title = a.Title
			}
			t.Destructive = t.Destructive && !a.ReadOnlyHint
			if a.OpenWorldHint != nil && *a.OpenWorldHint {
				t.Outbound = "the outside world, through MCP server " + serverName
			}
		}
		if s, ok := m.servers[serverName]; ok && s.cfg.IsHTTP() {
			t.Outbound = "the remote MCP server " + serverName + " (" + hostOf(s.cfg.URL) + ")"
		}
		t.Hash = definitionHash(st)
		key := serverName + "/" + st.Name
		switch pinned, ok := m.state.Pins[key]; {
		case !ok, !strings.HasPrefix(pinned, "v2:") && pinned == legacyHash(st):
			m.state.Pins[key] = t.Hash // trust on first use, or a legacy pin carried over
			pinsChanged = true
		case pinned != t.Hash:
			t.Changed = true
			if p := prev[name]; p == nil || p.Hash != t.Hash {
				dropped = append(dropped, t)
			}
		}
		t.Off = m.state.Off[key]
		t.Enabled = !t.Changed && !t.Off
		c, err := compileSchema(schema)
		if err != nil {
			m.log.Warn("mcp: tool skipped: its input schema does not compile", "server", serverName, "tool", st.Name, "err", err)
			continue
		}
		t.schema = c
		m.catalogue[name] = t
	}
	if rt := resourceTool(serverName); resources && m.catalogue[rt.Name] == nil {
		rt.schema, _ = compileSchema(readResourceSchema)
		rt.Off = m.state.Off[serverName+"/"+ReadResourceTool]
		rt.Enabled = !rt.Off
		m.catalogue[rt.Name] = rt
	}
	var snap persisted
	if pinsChanged {
		snap = m.state.clone()
	}
	m.mu.Unlock()
	for _, t := range dropped {
		m.log.Warn("mcp: tool disabled: its definition changed since it was approved; look at it in the MCP panel, or run: jarvis mcp approve "+t.Name,
			"server", t.Server, "tool", t.Tool, "hash", t.Hash)
	}
	if pinsChanged {
		if err := saveState(m.opts.StatePath, snap); err != nil {
			m.log.Error("mcp: saving tool pins failed", "err", err)
		}
	}
	m.changed()
}

// definitionHash is the pin of a tool: every field of its definition a
// model or a prompt can see (name, title, description, input and output
// schemas, annotations, the annotations' title among them), in canonical
// JSON. Pins made by this function start with "v2:"; legacyHash is the
// pin of earlier versions (description, input schema, annotations).
func definitionHash(t *sdk.Tool) string {
	var v struct {
		Name         string `json:"name"`
		Title        string `json:"title"`
		Description  string `json:"description"`
		InputSchema  any    `json:"inputSchema"`
		OutputSchema any    `json:"outputSchema"`
		Annotations  any    `json:"annotations"`
	}
	v.Name, v.Title, v.Description = t.Name, t.Title, t.Description
	v.InputSchema, v.OutputSchema, v.Annotations = t.InputSchema, t.OutputSchema, t.Annotations
	return "v2:" + canonicalHash(v)
}

// legacyHash is the pin earlier versions stored (no prefix). A stored
// legacy pin that still matches is carried over to definitionHash without
// asking: the fields it covered are unchanged, and the others were never
// pinned.
func legacyHash(t *sdk.Tool) string {
	var v struct {
		Description string `json:"description"`
		InputSchema any    `json:"inputSchema"`
		Annotations any    `json:"annotations"`
	}
	v.Description, v.InputSchema, v.Annotations = t.Description, t.InputSchema, t.Annotations
	return canonicalHash(v)
}

func canonicalHash(v any) string {
	b, _ := json.Marshal(v)
	var generic any
	json.Unmarshal(b, &generic) // maps marshal with sorted keys: one canonical form
	b, _ = json.Marshal(generic)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Catalogue returns the enabled tools, sorted by name: what models are
// offered.
func (m *Manager) Catalogue() []Tool {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Tool, 0, len(m.catalogue))
	for _, t := range m.catalogue {
		if t.Enabled {
			out = append(out, *t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Servers returns every configured server with its tools (enabled or not)
// and the configuration error, if the file could not be applied.
func (m *Manager) Servers() ([]ServerStatus, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ServerStatus, 0, len(m.servers))
	for name, s := range m.servers {
		s.mu.Lock()
		ss := ServerStatus{Name: name, Label: s.cfg.Label, Transport: s.cfg.transport(), State: s.state, Error: s.err, Restarts: s.restarts,
			Tools: []Tool{}, Approval: s.approval, Warnings: s.cfg.Warnings, Log: append([]string(nil), s.logs...),
			SignIn: s.cfg.IsHTTP(), SignedIn: s.signedIn, SigningIn: s.signingIn, SignInError: s.signInErr}
		s.mu.Unlock()
		if ss.Label == "" {
			ss.Label = name
		}
		for _, t := range m.catalogue {
			if t.Server == name {
				ss.Tools = append(ss.Tools, *t)
			}
		}
		sort.Slice(ss.Tools, func(i, j int) bool { return ss.Tools[i].Name < ss.Tools[j].Name })
		out = append(out, ss)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, m.cfgErr
}

// Approve accepts a tool's changed definition, the one whose hash the
// user was shown: its hash becomes the pin and the tool is enabled again.
// A definition that changed again since (another hash) is refused: an
// approval never covers what the user did not see.
func (m *Manager) Approve(name, hash string) error {
	m.mu.Lock()
	t, ok := m.catalogue[name]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("no MCP tool %q", name)
	}
	if hash == "" || t.Hash != hash {
		m.mu.Unlock()
		return fmt.Errorf("the definition of MCP tool %q changed again since it was shown to you; nothing was approved: look at the new one and approve it if you trust it", name)
	}
	if !t.Changed {
		m.mu.Unlock()
		return nil
	}
	m.state.Pins[t.Server+"/"+t.Tool] = t.Hash
	t.Changed = false
	t.Enabled = !t.Off
	snap := m.state.clone()
	m.mu.Unlock()
	m.log.Info("mcp: changed tool definition approved", "tool", name, "hash", hash)
	m.changed()
	return saveState(m.opts.StatePath, snap)
}

// SetToolEnabled is a tool's switch.
func (m *Manager) SetToolEnabled(name string, on bool) error {
	m.mu.Lock()
	t, ok := m.catalogue[name]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("no MCP tool %q", name)
	}
	key := t.Server + "/" + t.Tool
	if on {
		delete(m.state.Off, key)
	} else {
		m.state.Off[key] = true
	}
	t.Off = !on
	t.Enabled = !t.Off && !t.Changed
	snap := m.state.clone()
	m.mu.Unlock()
	m.changed()
	return saveState(m.opts.StatePath, snap)
}

// Definition is the gate's view of an MCP tool: risky by default (a
// server's readOnlyHint never lowers it; only a user's policy rule can).
func (m *Manager) Definition(name string) (tools.Definition, bool) {
	m.mu.Lock()
	t, ok := m.catalogue[name]
	m.mu.Unlock()
	if !ok {
		return tools.Definition{}, false
	}
	desc := t.Description
	if t.Title != "" {
		desc = t.Title + ": " + desc
	}
	return tools.Definition{Name: name, Description: fmt.Sprintf("MCP server %q, tool %q. %s", t.Server, t.Tool, desc),
		Parameters: t.InputSchema, Risk: tools.Risky, Capabilities: []string{"mcp." + t.Server}, Outbound: t.Outbound,
		Title: m.serverTitle(t.Server) + " › " + friendly(t.Title, t.Tool)}, true
}

// serverTitle is a server's name for people: the title it gave in its
// initialize answer, else its name in mcp.json made readable.
func (m *Manager) serverTitle(name string) string {
	m.mu.Lock()
	s := m.servers[name]
	m.mu.Unlock()
	label := name
	if s != nil {
		if cs := s.current(); cs != nil {
			if r := cs.InitializeResult(); r != nil && r.ServerInfo != nil && strings.TrimSpace(r.ServerInfo.Title) != "" {
				return strings.TrimSpace(r.ServerInfo.Title)
			}
		}
		if s.cfg.Label != "" {
			label = s.cfg.Label
		}
	}
	return friendly("", label)
}

// friendly is title when set, else name with its separators as spaces and
// a capital first letter ("get_weather" → "Get weather").
func friendly(title, name string) string {
	if t := strings.TrimSpace(title); t != "" {
		return t
	}
	words := strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' }), " ")
	if words == "" {
		return name
	}
	r := []rune(words)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// hostOf is a URL's host, or the URL itself when it does not parse.
func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// Assess is the gate's argument-aware check of an MCP call: the tool must
// be in the catalogue and enabled, its arguments must satisfy its input
// schema; the canonical form is the arguments in canonical JSON (sorted
// keys, no spaces). destructiveHint marks the call destructive.
func (m *Manager) Assess(name string, args json.RawMessage) tools.Assessment {
	m.mu.Lock()
	t, ok := m.catalogue[name]
	var tc Tool
	if ok {
		tc = *t
	}
	m.mu.Unlock()
	server, tool, _ := splitName(name)
	switch {
	case !ok:
		return tools.Assessment{Risk: tools.Forbidden, Reason: fmt.Sprintf("no MCP tool %q is connected (server %q)", tool, server)}
	case tc.Changed:
		return tools.Assessment{Risk: tools.Forbidden, Reason: fmt.Sprintf("the definition of MCP tool %q changed since it was approved; it stays disabled until you approve the new one in the MCP panel", name)}
	case tc.Off:
		return tools.Assessment{Risk: tools.Forbidden, Reason: fmt.Sprintf("MCP tool %q is switched off", name)}
	}
	canon, err := tc.schema.validate(args)
	if err != nil {
		return tools.Assessment{Risk: tools.Forbidden, Reason: fmt.Sprintf("%s: bad arguments: %v", name, err)}
	}
	a := tools.Assessment{Risk: tools.Risky, Canonical: canon, Destructive: tc.Destructive}
	if tc.Destructive {
		a.Reason = "the server marks it destructive"
	}
	return a
}

// Call runs an MCP tool with canonical arguments and returns the text the
// model reads: content as text, images and resources summarized, the
// structured content, capped at ResultCap and flagged when it reads like
// instructions to a model. callID ties progress notifications to the call;
// cancelling ctx sends the server notifications/cancelled.
func (m *Manager) Call(ctx context.Context, callID, name string, args json.RawMessage, onProgress func(Progress)) (string, error) {
	server, tool, ok := splitName(name)
	if !ok {
		return "", fmt.Errorf("%q is not an MCP tool", name)
	}
	s, cs, err := m.ready(server)
	if err != nil {
		return "", err
	}
	defer m.smp.during(server, ctx)() // a completion it asks for meanwhile is for this call's conversation
	m.mu.Lock()
	t := m.catalogue[name]
	m.mu.Unlock()
	if t != nil && t.resource {
		cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout())
		defer cancel()
		out, err := m.readResource(cctx, cs, args)
		if err != nil {
			return "", fmt.Errorf("%s: MCP server %q: %w", name, server, err)
		}
		return out, nil
	}
	var argv map[string]any
	if err := json.Unmarshal(args, &argv); err != nil {
		return "", fmt.Errorf("%s: arguments: %w", name, err)
	}
	timeout := s.cfg.CallTimeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	params := &sdk.CallToolParams{Name: tool, Arguments: argv}
	token := fmt.Sprintf("jarvis-%d", m.seq.Add(1))
	params.SetProgressToken(token)
	m.mu.Lock()
	m.calls[token] = func(p Progress) {
		p.Call, p.Tool = callID, name
		if onProgress != nil {
			onProgress(p)
		}
	}
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.calls, token)
		m.mu.Unlock()
	}()
	res, err := s.callTool(cctx, cs, params) // taskhttp.go
	switch {
	case err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		return "", fmt.Errorf("%s: no answer from MCP server %q within %s (the call was cancelled)", name, server, timeout)
	case err != nil && ctx.Err() != nil:
		return "", fmt.Errorf("%s: cancelled", name)
	case err != nil:
		return "", fmt.Errorf("%s: MCP server %q: %w", name, server, err)
	}
	text := m.render(res, mediaSink(ctx))
	if res.IsError {
		return "", fmt.Errorf("%s: the tool reported an error: %s", name, text)
	}
	return text, nil
}

func (s *server) statusLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != "" {
		first, _, _ := strings.Cut(s.err, "\n")
		return s.state + ": " + first
	}
	return s.state
}

func (m *Manager) progress(p *sdk.ProgressNotificationParams) {
	token, _ := p.ProgressToken.(string)
	m.mu.Lock()
	sink := m.calls[token]
	m.mu.Unlock()
	if sink != nil {
		sink(Progress{Progress: p.Progress, Total: p.Total, Message: p.Message})
	}
}

// serverList is a snapshot of the servers, to work on without the lock.
func (m *Manager) serverList() []*server {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		all = append(all, s)
	}
	return all
}

// ready is the configured server of that name and its session; an error in
// words when there is no such server or it is not ready.
func (m *Manager) ready(name string) (*server, *sdk.ClientSession, error) {
	m.mu.Lock()
	s := m.servers[name]
	m.mu.Unlock()
	if s == nil {
		return nil, nil, fmt.Errorf("MCP server %q is not configured", name)
	}
	cs := s.current()
	if cs == nil {
		return nil, nil, fmt.Errorf("MCP server %q is not ready (%s)", name, s.statusLine())
	}
	return s, cs, nil
}
