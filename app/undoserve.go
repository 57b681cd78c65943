package app

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"jarvis/app/mcp"
	"jarvis/internal/instance"
)

// ServeUndo answers `jarvis undo` run beside this process (a window or
// `jarvis --headless`, which holds dataDir's lock) on the data dir's control
// socket: the command's request is done here, through r, audited like an
// undo from the window, and its output and exit status go back to the
// command. emit, when set, is the window's: after files were restored it
// gets the same undo:changed event as an undo from the window. A request for another workspace than
// r's is answered as such; the command then does it itself.
//
// mcpm, when set, answers `jarvis mcp` the same way (mcpcli.go).
func ServeUndo(dataDir string, r *Runner, emit func(event string, data any), mcpm *mcp.Manager) (*instance.Server, error) {
	return ServeControl(dataDir, r, emit, nil, mcpm)
}

// ServeControl is ServeUndo answering more: `jarvis inbox` (its list and
// done, and allow|deny ID of a call of a task's run waiting in r's
// Approvals, inboxcli.go), and, when
// yield is set (`jarvis --headless`), a window's request that this process
// stop so that the window can take the data dir.
func ServeControl(dataDir string, r *Runner, emit func(event string, data any), yield func(), mcpm *mcp.Manager) (*instance.Server, error) {
	return instance.Listen(dataDir, func(ctx context.Context, op string, body json.RawMessage) (any, error) {
		switch op {
		case InboxDecideOp:
			return decideFromControl(r, body)
		case InboxListOp, InboxDoneOp:
			return inboxFromControl(ctx, r, op, body)
		case YieldOp:
			if yield == nil {
				return nil, fmt.Errorf("this Jarvis is a window; it does not give way")
			}
			r.logger.Info("a window asked for the data dir: this headless process stops")
			go yield()
			return map[string]bool{"yielding": true}, nil
		case mcpOp:
			if mcpm == nil {
				return nil, fmt.Errorf("this Jarvis runs no MCP servers")
			}
			var req mcpRequest
			if err := json.Unmarshal(body, &req); err != nil {
				return nil, fmt.Errorf("mcp request: %w", err)
			}
			r.logger.Info("jarvis mcp handed over to this process", "request", req.Cmd, "name", req.Name)
			return mcpControl(mcpm, req)
		case undoOp:
		default:
			return nil, fmt.Errorf("this Jarvis does not know the request %q", op)
		}
		var req undoRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return nil, fmt.Errorf("undo request: %w", err)
		}
		if req.Workspace != r.cps.Workspace() {
			return undoAnswer{OtherWorkspace: true}, nil
		}
		ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		var out, errOut strings.Builder
		code, restored := runUndo(ctx, r, req, &out, &errOut)
		r.logger.Info("jarvis undo handed over to this process", "request", req.Sub, "turn", req.Turn, "force", req.Force, "exit", code)
		if restored && emit != nil {
			undoChanged(emit, req.Turn)
		}
		return undoAnswer{Code: code, Stdout: out.String(), Stderr: errOut.String()}, nil
	})
}
