package app

// `jarvis inbox` beside a running Jarvis: the decision on a call of a
// task's run waiting for approval is handed over the control socket to the
// process that holds the call (window or headless), and the list and "done"
// too, so that all act on the Inbox that process keeps: its in-process
// service's, or the service's it is attached to (--service-url), whose data
// dir is not this one.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"jarvis/api"
	"jarvis/app/gate"
	"jarvis/app/inbox"
	"jarvis/internal/instance"
)

// Control socket requests of the Inbox and of a window taking over.
const (
	InboxDecideOp = "inbox.decide"
	InboxListOp   = "inbox.list"
	InboxDoneOp   = "inbox.done"
	YieldOp       = "yield"
)

type listRequest struct {
	All bool `json:"all"`
}

type doneRequest struct {
	ID string `json:"id"`
}

// inboxFromControl answers the list and "done" of `jarvis inbox` from the
// Inbox this process keeps.
func inboxFromControl(ctx context.Context, r *Runner, op string, body json.RawMessage) (any, error) {
	svc, err := r.approvals.Service()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if op == InboxListOp {
		var req listRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("inbox request: %w", err)
		}
		in, err := svc.Inbox(ctx, req.All)
		return in, friendly(err)
	}
	var req doneRequest
	if err := json.Unmarshal(body, &req); err != nil || req.ID == "" {
		return nil, errors.New("inbox request: which item?")
	}
	yes := true
	if _, err := svc.UpdateInbox(ctx, req.ID, api.InboxUpdate{Read: &yes, Done: &yes}); err != nil {
		if se := (*api.StatusError)(nil); errors.As(err, &se) && se.Status == http.StatusNotFound {
			return nil, fmt.Errorf("the Inbox has no item %q", req.ID)
		}
		return nil, friendly(err)
	}
	return map[string]bool{"done": true}, nil
}

// InboxFromTerminal lists the Inbox of the Jarvis running on dataDir (the
// one its allow and deny act on); running is false when none runs there,
// and the caller reads the data dir's own.
func InboxFromTerminal(dataDir string, all bool) (in api.Inbox, running bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err = instance.Call(ctx, dataDir, InboxListOp, listRequest{All: all}, &in)
	if errors.Is(err, instance.ErrNotListening) {
		return api.Inbox{}, false, nil
	}
	return in, true, err
}

// DoneFromTerminal marks an item done in the Inbox of the Jarvis running on
// dataDir; running is false when none runs there.
func DoneFromTerminal(dataDir, id string) (running bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var out map[string]bool
	err = instance.Call(ctx, dataDir, InboxDoneOp, doneRequest{ID: id}, &out)
	if errors.Is(err, instance.ErrNotListening) {
		return false, nil
	}
	return true, err
}

type decideRequest struct {
	ID     string `json:"id"`
	Choice string `json:"choice"` // allow | deny
}

func decideFromControl(r *Runner, body json.RawMessage) (any, error) {
	var req decideRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("inbox request: %w", err)
	}
	c := gate.Refuse
	if req.Choice == "allow" {
		c = gate.Once
	} else if req.Choice != "deny" {
		return nil, fmt.Errorf("answer an approval with allow or deny, not %q", req.Choice)
	}
	if err := r.approvals.Decide(req.ID, c); err != nil {
		if errors.Is(err, inbox.ErrNoSuchApproval) {
			return nil, errors.New("nothing waits for approval under that id (it was decided, it expired, or its run ended)")
		}
		return nil, err
	}
	r.logger.Info("an approval was decided from the terminal", "item", req.ID, "choice", req.Choice)
	return map[string]string{"decided": req.Choice}, nil
}

// DecideFromTerminal hands `jarvis inbox allow|deny ID` to the running
// process of dataDir.
func DecideFromTerminal(dataDir, id, choice string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out map[string]string
	err := instance.Call(ctx, dataDir, InboxDecideOp, decideRequest{ID: id, Choice: choice}, &out)
	if errors.Is(err, instance.ErrNotListening) {
		return errors.New("no Jarvis is running on this data dir, so nothing waits for approval: a waiting call lives in the process running its task")
	}
	return err
}

// AskToYield asks the headless process holding dataDir to stop (a window
// is starting); false when none answers or it is a window.
func AskToYield(dataDir string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var out map[string]bool
	return instance.Call(ctx, dataDir, YieldOp, struct{}{}, &out) == nil && out["yielding"]
}
