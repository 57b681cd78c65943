package app

// The gate without a window (`jarvis --headless`): the desktop's gate,
// executor and audit log follow every session of the service and answer
// every tool.request, with the policy as the only judge. A call the policy
// would prompt for is denied and audited as decided by "headless"
// (ToolRunnerOptions.Headless), except a call of a scheduled task's run,
// which waits in the Inbox for the user (package inbox). Users run it on machines without a display
// and for automation the policy allows; the security suite drives the real
// gate end to end through it.

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"jarvis/api"
	"jarvis/app/inbox"
)

// HeadlessOptions configures RunHeadless.
type HeadlessOptions struct {
	Client       *api.Client // the service (required)
	StreamClient *api.Client // follows the streams; default Client (use NewStreamHTTPClient's)
	// Tools is the gate; build it with ToolRunnerOptions.Headless.
	Tools  ToolRunner
	Logger *slog.Logger
	// Poll is how often the session list is read for new sessions.
	// Default 500 ms.
	Poll   time.Duration
	Follow FollowOptions
	// Ready, when set, is called once the sessions that exist at start are
	// known: every session created after it is followed from its first
	// event, so none of its calls is missed.
	Ready func()
	// Approvals: calls of tasks' runs waiting for approval (Runner.Approvals).
	Approvals *inbox.Approvals
}

// RunHeadless follows every session of the service and answers its tool
// calls until ctx ends. Sessions that exist when it starts are followed from
// their current end (a call already waiting gets the service's fail-closed
// timeout); every session that appears later is followed from its first
// event, so none of its calls is missed. One gate per service: a window and
// a headless gate answering the same service would each judge its calls.
func RunHeadless(ctx context.Context, opts HeadlessOptions) error {
	if opts.Client == nil || opts.Tools == nil {
		return errors.New("app: headless needs Client and Tools")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Poll <= 0 {
		opts.Poll = 500 * time.Millisecond
	}
	a, err := New(Options{Client: opts.Client, StreamClient: opts.StreamClient, Logger: opts.Logger, Tools: opts.Tools,
		Follow: opts.Follow, Approvals: opts.Approvals, Emit: func(event string, data any) {
			if d, ok := data.(ToolDecision); ok && event == "tool:decision" {
				opts.Logger.Info("tool call", "session", d.SessionID, "call", d.CallID, "tool", d.Tool,
					"decision", d.Decision, "decided_by", d.DecidedBy, "reason", d.Reason)
			}
		}})
	if err != nil {
		return err
	}
	defer Shutdown(a)
	go a.watchApprovals() // a task's call waits for you in the Inbox, not denied
	stop := context.AfterFunc(ctx, a.cancel)
	defer stop()

	var atStart map[string]bool // the sessions listed first; nil until then
	tick := time.NewTicker(opts.Poll)
	defer tick.Stop()
	for {
		first := atStart == nil
		if known, err := a.followAll(atStart, nil); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			// A service that failed to start stays failed: exit (a
			// systemd unit starts the process again later) rather than
			// answer nothing for ever.
			if se := (*api.StatusError)(nil); errors.As(err, &se) && se.Err.Code == "service_failed" {
				return errors.New(se.Err.Message)
			}
			opts.Logger.Warn("headless: could not list the service's sessions", "err", err)
		} else if first {
			atStart = known
			opts.Logger.Info("headless: following every session; prompts are answered by the policy alone", "sessions", len(known))
			if opts.Ready != nil {
				opts.Ready()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// followAll follows every session not followed yet (of those only accepts,
// nil: all) and returns the ids listed. A session that existed when headless started (atStart, or every
// session on the first call, when atStart is nil) is followed from where its
// stream stands: replaying it would run again calls that were answered
// before. A session that appeared later is followed from its first event,
// so none of its calls is missed.
func (a *App) followAll(atStart map[string]bool, only func(Session) bool) (map[string]bool, error) {
	rctx, cancel := a.reqCtx()
	defer cancel()
	ss, err := a.s.sessions(rctx, "")
	if err != nil {
		return nil, err
	}
	listed := make(map[string]bool, len(ss))
	for _, s := range ss {
		if only != nil && !only(s) {
			continue
		}
		listed[s.SessionID] = true
		if a.fol.has(s.SessionID) {
			continue
		}
		from := "0"
		if atStart == nil || atStart[s.SessionID] {
			tr, err := a.s.messages(rctx, s.SessionID)
			if err != nil {
				continue // deleted meanwhile, or not readable: next poll
			}
			from = strconv.FormatInt(tr.LastEventID, 10)
		}
		a.follow(s.SessionID, from)
	}
	return listed, nil
}
