package app

// `jarvis inbox allow|deny ID` beside a running Jarvis: the decision on a
// call of a task's run waiting for approval is handed over the control
// socket to the process that holds the call (window or headless).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"jarvis/app/gate"
	"jarvis/app/inbox"
	"jarvis/internal/instance"
)

// Control socket requests of the Inbox and of a window taking over.
const (
	InboxDecideOp = "inbox.decide"
	YieldOp       = "yield"
)

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
