package acpagent

// The terminal/* client capability. Jarvis runs an agent's commands the way
// it runs a model's: terminal/create becomes one run_command call that the
// Host sends through the desktop's gate (prompt, policy, audit, Landlock),
// and the desktop runs it to completion before it answers. So create runs
// the command and keeps its result; output, wait_for_exit, kill and release
// answer from that kept result (the command has already exited: kill has
// nothing left to end). Jarvis starts no shell: a command line without
// args is split into words only when it has no shell syntax; the agent's
// env is not passed (the desktop's run_command environment applies).

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

// Command is one terminal/create: the program the agent wants run.
type Command struct {
	Program string
	Args    []string
	// Cwd is absolute and inside the working folder (the folder itself
	// when the agent gave none).
	Cwd string
}

// CommandOutput is a command that ran to its end.
type CommandOutput struct {
	// Output is its stdout then its stderr.
	Output string
	// Truncated reports output the runner already cut (its own cap).
	Truncated bool
	ExitCode  int
}

// terminals are the kept results of one process's commands, by terminal id.
type terminals struct {
	mu   sync.Mutex
	n    int
	byID map[string]acp.TerminalOutputResponse
}

// made reports whether id is a terminal this client created (released or not).
func (ts *terminals) made(id string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var n int
	_, err := fmt.Sscanf(id, "term_%d", &n)
	return err == nil && n >= 1 && n <= ts.n && id == fmt.Sprintf("term_%d", n)
}

func (ts *terminals) add(out acp.TerminalOutputResponse) string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.byID == nil {
		ts.byID = map[string]acp.TerminalOutputResponse{}
	}
	ts.n++
	id := fmt.Sprintf("term_%d", ts.n)
	ts.byID[id] = out
	return id
}

func (ts *terminals) get(id string, release bool) (acp.TerminalOutputResponse, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out, ok := ts.byID[id]
	if !ok {
		return out, acp.NewInvalidParams(map[string]any{"error": fmt.Sprintf("no terminal %q (never created, or released)", id)})
	}
	if release {
		delete(ts.byID, id)
	}
	return out, nil
}

// shellSyntax are the characters that make a command line need a shell.
const shellSyntax = "|&;<>()$`\\\"'*?[]#~=%{}\n"

// splitLine splits a command line given without args into a program and
// its arguments when it is plain words; otherwise it is left whole (and the
// desktop refuses a program by that name: it starts no shell).
func splitLine(line string) (string, []string) {
	if strings.ContainsAny(line, shellSyntax) {
		return line, nil
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		return line, nil
	}
	return f[0], f[1:]
}

// keepTail cuts s to its last limit bytes, at a character boundary, as
// the protocol asks (truncation from the beginning); limit <= 0 keeps all.
func keepTail(s string, limit int) (string, bool) {
	if limit <= 0 || len(s) <= limit {
		return s, false
	}
	s = s[len(s)-limit:]
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s, true
}

func (c *client) CreateTerminal(ctx context.Context, r acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	cwd := c.root
	if r.Cwd != nil && *r.Cwd != "" {
		var err error
		if cwd, err = c.confine(*r.Cwd); err != nil {
			return acp.CreateTerminalResponse{}, err
		}
	}
	program, args := r.Command, r.Args
	if len(args) == 0 {
		program, args = splitLine(program)
	}
	host, callCtx, done, err := c.turn(ctx)
	if err != nil {
		return acp.CreateTerminalResponse{}, err
	}
	defer done()
	out, err := host.RunCommand(callCtx, Command{Program: program, Args: args, Cwd: cwd})
	if err != nil {
		return acp.CreateTerminalResponse{}, acp.NewInternalError(map[string]any{"error": err.Error()})
	}
	limit := 0
	if r.OutputByteLimit != nil {
		limit = *r.OutputByteLimit
	}
	text, cut := keepTail(out.Output, limit)
	code := out.ExitCode
	id := c.terms.add(acp.TerminalOutputResponse{Output: text, Truncated: out.Truncated || cut, ExitStatus: &acp.TerminalExitStatus{ExitCode: &code}})
	return acp.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *client) TerminalOutput(_ context.Context, r acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return c.terms.get(r.TerminalId, false)
}

func (c *client) WaitForTerminalExit(_ context.Context, r acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	out, err := c.terms.get(r.TerminalId, false)
	if err != nil {
		return acp.WaitForTerminalExitResponse{}, err
	}
	return acp.WaitForTerminalExitResponse{ExitCode: out.ExitStatus.ExitCode, Signal: out.ExitStatus.Signal}, nil
}

// KillTerminal: the command has already ended (create ran it to its end);
// its output stays until release.
func (c *client) KillTerminal(_ context.Context, r acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	_, err := c.terms.get(r.TerminalId, false)
	return acp.KillTerminalResponse{}, err
}

func (c *client) ReleaseTerminal(_ context.Context, r acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	_, err := c.terms.get(r.TerminalId, true)
	return acp.ReleaseTerminalResponse{}, err
}
