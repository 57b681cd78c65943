// Package app is the desktop side of Jarvis behind the window: the methods
// the frontend calls (bound by main), the session streams it follows, and the
// tool-call loop (gate → executor → audit → POST /v1/tools/result).
//
// It talks to the service only through its HTTP API (api.Client), never by
// importing it, and it does not import Wails: main injects Emit, which sends
// an event to the frontend. Events the frontend receives:
//
//	stream:event   {sessionId, id, type, data}   every session-stream event, once, in order
//	stream:state   StreamState                    connecting / live / reconnecting / closed
//	tool:prompts   []gate.Prompt                  the permission prompts waiting for the user, oldest first
//	tool:decision  ToolDecision                   what happened to a call (for its card)
//	send:error     {sessionId, code, message}     a message the service refused before a turn began
//
// Concurrency: an App is safe for concurrent use; bound methods run on
// Wails' goroutines, each followed stream on its own, each tool call on its own.
package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/app/inbox"
)

// Options configures New.
type Options struct {
	Client *api.Client // the service (required)
	// StreamClient follows session streams. Build it on the *http.Client of
	// NewStreamHTTPClient: only that one notices a silent connection (and
	// reports an idle stream as live). Default Client.
	StreamClient *api.Client
	Emit         func(event string, data any) // required
	Logger       *slog.Logger
	Tools        ToolRunner // runs tool calls; nil denies every call
	Follow       FollowOptions
	// Prompts is the gate's prompt queue the window answers; nil when Tools is nil.
	Prompts Prompts
	// Audit is the tool-call audit log the audit panel shows; nil hides it.
	Audit *audit.Log
	// DataDir receives audit exports when SaveFile is nil.
	DataDir string
	// SaveFile asks the user where to save a file (a native save dialog,
	// provided by main) and returns the chosen path, or "" when cancelled.
	SaveFile func(defaultName string) (string, error)
	// About is the build and the paths the About view shows.
	About AboutOptions
	// Approvals are the calls of tasks' runs waiting for approval (the
	// tool runner's, Runner.Approvals); nil: none (inboxview.go).
	Approvals *inbox.Approvals
	// Unit is the systemd user unit of "Run tasks when Jarvis is closed";
	// nil: not offered.
	Unit *inbox.UnitOptions
	// Terminal opens a terminal the user sees running the program named
	// after it (an agent's login, agentlogin.go); nil: the first of the
	// desktop's terminals found (x-terminal-emulator, …).
	Terminal []string
}

// App is the object bound to the frontend.
type App struct {
	c       *api.Client
	sc      *api.Client
	s       svc
	emit    func(string, any)
	log     *slog.Logger
	tools   ToolRunner
	fopts   FollowOptions
	ctx     context.Context
	cancel  context.CancelFunc
	fol     followers
	calls   sync.WaitGroup
	prompts Prompts
	audit   *audit.Log
	dataDir string
	// saveFile is Options.SaveFile.
	saveFile  func(string) (string, error)
	about     AboutOptions
	approvals *inbox.Approvals
	unit      *inbox.UnitOptions
	terminal  []string // Options.Terminal

	mu      sync.Mutex
	local   []Session       // sessions created this launch (when the service cannot list them)
	handled map[string]bool // tool call ids already taken
	// inflight are the tool calls in the gate (prompting or running), by
	// call id: withdrawn (their context cancelled with gate.ErrWithdrawn)
	// when the service gives up on them (withdraw.go).
	inflight map[string]inflightCall
}

// NewStreamHTTPClient returns an *http.Client for StreamClient: no overall
// timeout (streams are long) and bodies that report every byte read.
func NewStreamHTTPClient() *http.Client {
	return &http.Client{Transport: activityTransport{base: http.DefaultTransport}}
}

// New returns an App; Startup must be called before use.
func New(opts Options) (*App, error) {
	if opts.Client == nil || opts.Emit == nil {
		return nil, errors.New("app: Client and Emit are required")
	}
	if opts.StreamClient == nil {
		opts.StreamClient = opts.Client
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &App{c: opts.Client, sc: opts.StreamClient, s: svc{opts.Client}, emit: opts.Emit, log: opts.Logger,
		tools: opts.Tools, fopts: opts.Follow, ctx: ctx, cancel: cancel, handled: map[string]bool{}, inflight: map[string]inflightCall{},
		prompts: opts.Prompts, audit: opts.Audit, dataDir: opts.DataDir, saveFile: opts.SaveFile, about: opts.About, approvals: opts.Approvals, unit: opts.Unit,
		terminal: opts.Terminal}, nil
}

// Start begins the app's background work (the prompt watcher); main calls
// it once the window can receive events.
func Start(a *App) {
	go a.watchPrompts()
	go a.watchApprovals()
	go a.followTaskRuns(time.Second) // inboxview.go
}

// Shutdown stops every stream of a and waits for running tool calls to
// finish (a prompt still open is denied: fail closed). It is a function, not
// a method, so that the window cannot call it through the bindings.
func Shutdown(a *App) {
	a.cancel()
	a.fol.stopAll()
	a.calls.Wait()
}

func (a *App) reqCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(a.ctx, 30*time.Second)
}

// friendly turns a service error into the message the UI shows.
func friendly(err error) error {
	var se *api.StatusError
	if errors.As(err, &se) {
		if w, ok := fieldWords[fmt.Sprint(se.Err.Details["field"])]; ok && se.Err.Code == "invalid_field" {
			return errors.New(w)
		}
		if w, ok := codeWords[se.Err.Code]; ok {
			return errors.New(w)
		}
		if se.Err.Message != "" {
			return errors.New(se.Err.Message)
		}
		return fmt.Errorf("the service answered %d %s", se.Status, se.Err.Code)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return errors.New("the service did not answer in time")
	}
	return err
}

// codeWords says in words what the service's message for programs says
// with a session id and a route.
var codeWords = map[string]string{
	"turn_in_progress": "This conversation is still answering your last message. Wait for it, or press Stop.",
}

// fieldWords says in words what a field the window's forms fill was
// refused for: the service's own message names the config file's key.
var fieldWords = map[string]string{
	"baseUrl": "The server address must start with http:// or https://, for example http://127.0.0.1:11434/v1 for Ollama.",
}

// Info is what the frontend needs at start.
type Info struct {
	ServiceURL string `json:"serviceUrl"`
	Version    string `json:"version"`
	Healthy    bool   `json:"healthy"`
	Error      string `json:"error,omitempty"`
	// Warning: the service could not reload its config file and runs on the
	// config it had (the file was deleted, for one).
	Warning string `json:"warning,omitempty"`
	// PendingConfig: the config file changed outside Jarvis and waits for
	// the user's approval (ApproveConfig): what it would start and where it
	// would connect.
	PendingConfig *api.PendingConfig `json:"pendingConfig,omitempty"`
}

// Info reports the service the app talks to.
func (a *App) Info() Info {
	ctx, cancel := a.reqCtx()
	defer cancel()
	h, err := a.c.Health(ctx)
	in := Info{ServiceURL: a.c.BaseURL(), Version: h.Version, Healthy: h.Healthy}
	if err != nil {
		in.Error = friendly(err).Error()
	} else if l, err := a.s.agentList(ctx); err == nil {
		in.Warning, in.PendingConfig = l.Warning, l.PendingConfig
	}
	return in
}

// defaultAgents stands in when the service has no agent list yet.
func defaultAgents() []Agent {
	return []Agent{{AgentID: "general", DisplayName: "General Assistant", Type: "chat", Status: api.AgentStatus{State: "unknown"}}}
}

// Agents lists the visible agents.
func (a *App) Agents() ([]Agent, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	ags, err := a.s.agents(ctx)
	if notFound(err) {
		return defaultAgents(), nil
	}
	if err != nil {
		return nil, friendly(err)
	}
	if ags == nil {
		ags = []Agent{}
	}
	return ags, nil
}

// Sessions lists sessions, most recently updated first; agentID "" lists all.
func (a *App) Sessions(agentID string) ([]Session, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	ss, err := a.s.sessions(ctx, agentID)
	if notFound(err) {
		a.mu.Lock()
		defer a.mu.Unlock()
		var out []Session
		for i := len(a.local) - 1; i >= 0; i-- {
			if agentID == "" || a.local[i].AgentID == agentID {
				out = append(out, a.local[i])
			}
		}
		return out, nil
	}
	if err != nil {
		return nil, friendly(err)
	}
	if ss == nil {
		ss = []Session{}
	}
	return ss, nil
}

// SessionPage is a page of the session list: NextCursor, when set, asks
// for the page after it.
type SessionPage struct {
	Sessions   []Session `json:"sessions"`
	NextCursor string    `json:"nextCursor,omitempty"`
}

// ListPage is how many sessions a page of the window's list holds.
const ListPage = 100

// SessionsPage lists a page of the sessions, most recently updated first
// (agentID "" lists all): cursor "" asks for the first page, a page's
// NextCursor for the one after it. The window's list loads a page at a time.
func (a *App) SessionsPage(agentID, cursor string) (SessionPage, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	page, err := a.s.sessionsPage(ctx, agentID, cursor, ListPage)
	if notFound(err) && cursor == "" {
		ss, err := a.Sessions(agentID) // the sessions started here
		return SessionPage{Sessions: ss}, err
	}
	if err != nil {
		return SessionPage{}, friendly(err)
	}
	if page.Sessions == nil {
		page.Sessions = []Session{}
	}
	return SessionPage{Sessions: page.Sessions, NextCursor: page.NextCursor}, nil
}

func newJarvisID() string {
	var b [9]byte
	rand.Read(b[:])
	return "j_" + hex.EncodeToString(b[:])
}

// NewSession starts a session with agentID.
func (a *App) NewSession(agentID string) (Session, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	r, err := a.c.CreateSession(ctx, api.CreateSessionRequest{JarvisSessionID: newJarvisID(), AgentID: agentID})
	if err != nil {
		return Session{}, friendly(err)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	s := Session{SessionID: r.GeneralSessionID, AgentID: agentID, CreatedAt: now, UpdatedAt: now}
	a.mu.Lock()
	a.local = append(a.local, s)
	a.mu.Unlock()
	return s, nil
}

// AttachSession attaches an external agent's session by the ID the user
// typed; the error carries the service's validation message.
func (a *App) AttachSession(agentID, sessionID string) (Session, error) {
	sessionID = strings.TrimSpace(sessionID)
	if sessionID == "" {
		return Session{}, errors.New("enter the session ID the external agent uses")
	}
	ctx, cancel := a.reqCtx()
	defer cancel()
	s, err := a.s.attach(ctx, agentID, sessionID)
	if err != nil {
		var se *api.StatusError
		if errors.As(err, &se) && se.Status == http.StatusConflict && se.Err.Message == "" {
			return Session{}, fmt.Errorf("session %q belongs to another agent", sessionID)
		}
		return Session{}, friendly(err)
	}
	return s, nil
}

// Transcript is OpenSession's answer.
type Transcript struct {
	SessionID string                  `json:"sessionId"`
	Messages  []api.TranscriptMessage `json:"messages"`
	// LastEventID is the stream position the transcript was read at.
	LastEventID int64 `json:"lastEventId"`
	// Unavailable says the service cannot list messages.
	Unavailable bool `json:"unavailable,omitempty"`
	// Roundtables are the session's round tables, oldest first, for the
	// cards the stream laid out live (empty when the service has none or
	// cannot list them).
	Roundtables []RoundtableCard `json:"roundtables"`
	// Compactions are the session's compactions, oldest first, for their
	// transcript lines (empty when the service has none or cannot list them).
	Compactions []api.CompactedEvent `json:"compactions"`
	// Versions are the versions of the shown turns that have others
	// ("< 1/2 >": Regenerate, Retry, Edit).
	Versions []api.TurnVersions `json:"versions,omitempty"`
}

// OpenSession loads a session's transcript and makes sure its stream is
// followed from the position the transcript was read at, so nothing is
// missed or shown twice. Streams stay followed while the app runs, so a tool
// call in a session the user left still reaches the gate; Following says the
// stream was already followed (the window's copy is then current).
func (a *App) OpenSession(sessionID string) (Transcript, error) {
	t, err := a.Reload(sessionID)
	if err != nil {
		return t, err
	}
	last := ""
	if !t.Unavailable {
		last = strconv.FormatInt(t.LastEventID, 10)
	}
	a.follow(sessionID, last)
	return t, nil
}

// Reload reads a transcript without touching its stream (after stream.reset).
func (a *App) Reload(sessionID string) (Transcript, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	t := Transcript{SessionID: sessionID, Messages: []api.TranscriptMessage{}, Roundtables: []RoundtableCard{}, Compactions: a.compactions(ctx, sessionID)}
	tr, err := a.s.messages(ctx, sessionID)
	if notFound(err) {
		t.Unavailable = true
		return t, nil
	}
	if err != nil {
		return t, friendly(err)
	}
	if tr.Messages != nil {
		t.Messages = tr.Messages
	}
	t.LastEventID = tr.LastEventID
	t.Versions = tr.Versions
	// Read after the messages: a run that ends in between is then already
	// finished here, and its roundtable.result, after LastEventID on the
	// stream, updates the same card.
	cards, err := a.s.roundtableCards(ctx, sessionID)
	switch {
	case err == nil:
		t.Roundtables = cards
	case notFound(err):
		// A service without round tables.
	default:
		a.log.Warn("could not read the session's round tables; their replies show as Markdown", "session", sessionID, "err", err)
	}
	return t, nil
}

// StreamEventData is the data of the "stream:event" event.
type StreamEventData struct {
	SessionID string `json:"sessionId"`
	ID        string `json:"id"`
	Type      string `json:"type"`
	Data      any    `json:"data"`
}

// follow starts following a session's stream after lastID ("" for new
// events only) unless it is followed already.
func (a *App) follow(sessionID, lastID string) {
	if a.fol.has(sessionID) {
		if st, ok := a.fol.state(sessionID); ok {
			a.emit("stream:state", st) // for the page, which may not have heard it
		}
		return
	}
	reconnected := false
	f := newFollower(a.sc, sessionID, lastID, a.fopts, func(ev api.StreamEvent) {
		a.emit("stream:event", StreamEventData{SessionID: sessionID, ID: ev.ID, Type: ev.Type, Data: ev.Data})
		a.onEvent(sessionID, ev)
	}, func(st StreamState) {
		a.fol.saw(st)
		a.emit("stream:state", st)
		// Run's goroutine is the only caller: reconnected needs no lock.
		if st.State == StateReconnecting {
			reconnected = true
		} else if st.State == StateLive && reconnected {
			reconnected = false
			a.serviceBack()
		}
	})
	a.fol.start(a.ctx, f)
}

// RenameSession sets a session's name.
func (a *App) RenameSession(sessionID, name string) error {
	ctx, cancel := a.reqCtx()
	defer cancel()
	return friendlyOrNil(a.s.rename(ctx, sessionID, strings.TrimSpace(name)))
}

// ClearSession wipes a session's history and keeps its metadata.
func (a *App) ClearSession(sessionID string) error {
	ctx, cancel := a.reqCtx()
	defer cancel()
	return friendlyOrNil(a.s.clear(ctx, sessionID))
}

// DeleteSession removes a session and stops following it.
func (a *App) DeleteSession(sessionID string) error {
	ctx, cancel := a.reqCtx()
	defer cancel()
	if err := a.s.delete(ctx, sessionID); err != nil {
		return friendly(err)
	}
	a.fol.stop(sessionID)
	a.mu.Lock()
	for i, s := range a.local {
		if s.SessionID == sessionID {
			a.local = append(a.local[:i], a.local[i+1:]...)
			break
		}
	}
	a.mu.Unlock()
	return nil
}

func friendlyOrNil(err error) error {
	if err == nil {
		return nil
	}
	return friendly(err)
}

// SendError is the data of the "send:error" event.
type SendError struct {
	SessionID string `json:"sessionId"`
	Code      string `json:"code"`
	Message   string `json:"message"`
}

// Send sends a user message. The turn's events arrive on the session's
// stream; a refusal before the turn begins arrives as "send:error".
func (a *App) Send(sessionID, text string) error {
	if strings.TrimSpace(text) == "" {
		return errors.New("the message is empty")
	}
	return a.sendMessage(sessionID, api.Message{Parts: []api.MessagePart{{Type: api.PartText, Text: text}}})
}

// SendVersion sends text as a new version of the session's turn turnID
// (Regenerate and Retry send its text again, Edit a changed one): the
// conversation branches there and shows, and sends the model, the new
// branch only.
func (a *App) SendVersion(sessionID, turnID, text string) error {
	if strings.TrimSpace(text) == "" {
		return errors.New("the message is empty")
	}
	if turnID == "" {
		return errors.New("no message to answer again")
	}
	return a.sendMessage(sessionID, api.Message{Parts: []api.MessagePart{{Type: api.PartText, Text: text}}}, turnID)
}

// ShowVersion shows the branch of the conversation through version turnID
// of a turn ("< 1/2 >"); the transcript is read again by the caller.
func (a *App) ShowVersion(sessionID, turnID string) error {
	ctx, cancel := a.reqCtx()
	defer cancel()
	return friendlyOrNil(a.c.Do(ctx, "POST", "/v1/sessions/"+url.PathEscape(sessionID)+"/versions", api.ShowVersionRequest{TurnID: turnID}, nil))
}

// sendMessage posts a message of one or more parts (attach.go) and follows
// the session; replaces, when given, is the turn the message is a new
// version of.
func (a *App) sendMessage(sessionID string, m api.Message, replaces ...string) error {
	r := api.ChatRequest{GeneralSessionID: sessionID, Mode: "general", Message: m}
	if len(replaces) > 0 {
		r.ReplacesTurnID = replaces[0]
	}
	a.follow(sessionID, "")
	a.calls.Add(1)
	go func() {
		defer a.calls.Done()
		// The POST's own stream duplicates the session stream; it is read
		// only so the request lives as long as the turn, and ignored.
		err := a.c.ChatStreamRequest(a.ctx, r, func(api.StreamEvent) error { return nil })
		var se *api.StatusError
		if errors.As(err, &se) {
			a.emit("send:error", SendError{SessionID: sessionID, Code: se.Err.Code, Message: friendly(err).Error()})
		} else if err != nil && a.ctx.Err() == nil {
			a.log.Debug("chat request ended", "session", sessionID, "err", err)
		}
	}()
	return nil
}

// Cancel stops the session's running turn.
func (a *App) Cancel(sessionID string) (bool, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	r, err := a.c.Cancel(ctx, sessionID)
	if err != nil {
		return false, friendly(err)
	}
	return r.Cancelled, nil
}
