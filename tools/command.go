package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"jarvis/internal/procstop"
)

type runArgs struct {
	Program *string  `json:"program"`
	Args    []string `json:"args"`
	Cwd     string   `json:"cwd"`
	// Network asks for the network; without it the program has none. The
	// gate judges it with the rest (a rule must allow it, the prompt says
	// so).
	Network bool `json:"network"`
}

// CommandResult is run_command's result, returned as JSON. A non-zero exit
// is a result, not an error: the program ran.
type CommandResult struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// Sandbox is how it ran (Sandbox.Describe), Network whether it had
	// the network, DurationMS how long it ran.
	Sandbox    string `json:"sandbox"`
	Network    bool   `json:"network"`
	DurationMS int64  `json:"duration_ms"`
	// Stopped says why Jarvis stopped it (its whole process tree): a
	// timeout; empty when it ended by itself.
	Stopped string `json:"stopped,omitempty"`
}

// shells are the programs whose -c runs a whole command line: shell syntax
// runs only through them, and such a call always prompts (Assessment.AlwaysAsk).
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "fish": true, "ash": true, "busybox": true}

// shellLine returns the command line a shell program runs with -c, and
// whether the call is one.
func shellLine(program string, args []string) (string, bool) {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(program)), ".exe")
	if !shells[base] {
		return "", false
	}
	for i, a := range args {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", true
		}
	}
	// busybox sh -c, or a shell reading a script from its stdin or a file:
	// the script is what runs, so it prompts too.
	return strings.Join(args, " "), base == "busybox"
}

// deletePrograms are programs whose purpose is deleting; run_command calls
// of them are marked destructive.
var deletePrograms = map[string]bool{
	"rm": true, "rmdir": true, "unlink": true, "shred": true, "srm": true,
	"del": true, "erase": true, "rd": true, "trash": true, "trash-put": true, "gio-trash": true,
}

// destructive reports whether a command line deletes files: a deleting
// program, find -delete, rsync --delete…, git rm / git clean.
func destructive(program string, args []string) bool {
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(program, `\`, "/")))
	base = strings.TrimSuffix(base, ".exe")
	if deletePrograms[base] {
		return true
	}
	for _, a := range args {
		if a == "-delete" || strings.HasPrefix(a, "--delete") || a == "--remove-source-files" {
			return true
		}
	}
	if base == "git" {
		// The subcommand is the first word that is neither an option nor
		// the value of one of git's options that take a separate value.
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace" || a == "--exec-path":
				i++
			case strings.HasPrefix(a, "-"):
			default:
				return a == "rm" || a == "clean"
			}
		}
	}
	return false
}

// Sandbox returns the sandbox of a program started with writable folders
// (absolute) and, when network, the network: the executor's helper,
// bubblewrap (unless Options.NoBubblewrap) and protected folders.
func (e *Executor) Sandbox(writable []string, network bool) Sandbox {
	return Sandbox{Helper: e.opts.ConfineHelper, Bwrap: e.bwrap, Writable: writable, Protected: e.protected, Network: network}
}

type progressKey struct{}

// WithProgress hands run_command's output to fn while the program runs:
// each chunk as it arrives (stdout and stderr interleaved), for the card.
func WithProgress(ctx context.Context, fn func(chunk string)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// streamBuffer is a capBuffer that also passes what it keeps to the
// call's progress function.
type streamBuffer struct {
	capBuffer
	progress func(string)
}

func (s *streamBuffer) Write(p []byte) (int, error) {
	before := s.buf.Len()
	n, err := s.capBuffer.Write(p)
	if s.progress != nil && s.buf.Len() > before {
		s.progress(string(s.buf.Bytes()[before:]))
	}
	return n, err
}

func (e *Executor) prepareRunCommand(args json.RawMessage) (*call, error) {
	var a runArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	prog, err := required("program", a.Program)
	if err != nil {
		return nil, err
	}
	if prog == "" {
		return nil, fmt.Errorf("%w: program is empty", ErrBadArguments)
	}
	key := prog
	if strings.ContainsAny(prog, `/\`) {
		if !filepath.IsAbs(prog) {
			return nil, fmt.Errorf("%w: program %q must be a bare name or an absolute path", ErrNotAllowed, prog)
		}
		key = filepath.Clean(prog)
	} else if strings.ContainsAny(prog, " \t|&;<>()$`'\"*?[]{}~") {
		return nil, fmt.Errorf("%w: program %q is a command line, not a program: shell syntax runs only as sh -c '…'", ErrBadArguments, prog)
	}
	for _, s := range a.Args {
		if strings.ContainsRune(s, 0) {
			return nil, fmt.Errorf("%w: argument contains a NUL byte", ErrBadArguments)
		}
	}
	cwd, err := e.ws.resolve(a.Cwd)
	if err != nil {
		return nil, err
	}
	c := &call{destructive: destructive(prog, a.Args), canon: map[string]any{"program": key, "cwd": display(cwd)}}
	if len(a.Args) > 0 {
		c.canon["args"] = a.Args
	}
	if a.Network {
		c.canon["network"] = true
	}
	line, isShell := shellLine(key, a.Args)
	c.alwaysAsk = isShell
	// Said in every prompt: what a program does is not checkpointed, and
	// how it runs.
	sb := e.Sandbox(nil, a.Network)
	c.sandbox = sb.Describe()
	c.note = "commands cannot be undone; " + c.sandbox
	if isShell {
		c.note = "a shell runs this whole command line, so it always asks: " + line + "; " + c.note
	}
	if c.destructive {
		c.note = "the command deletes files; " + c.note
	}
	c.run = func(ctx context.Context) (string, error) {
		path := key
		if !filepath.IsAbs(key) {
			if path, err = e.opts.LookPath(key); err != nil {
				return "", fmt.Errorf("%w: %v", ErrUnsupported, err)
			}
		}
		dir := e.ws.abs(cwd)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("%w: cwd %s is not a folder", ErrBadArguments, display(cwd))
		}
		tmp, err := os.MkdirTemp("", "jarvis-cmd-")
		if err != nil {
			return "", err
		}
		defer os.RemoveAll(tmp)
		sb := e.Sandbox([]string{e.ws.real, tmp}, a.Network)
		progress, _ := ctx.Value(progressKey{}).(func(string))
		stdout := &streamBuffer{capBuffer: capBuffer{max: e.opts.OutputCap}, progress: progress}
		stderr := &streamBuffer{capBuffer: capBuffer{max: e.opts.OutputCap}, progress: progress}
		var mu sync.Mutex // one progress call at a time: stdout and stderr are copied by two goroutines
		if progress != nil {
			locked := func(s string) { mu.Lock(); defer mu.Unlock(); progress(s) }
			stdout.progress, stderr.progress = locked, locked
		}
		start := time.Now()
		res, err := e.runStopped(ctx, sb.Command(path, a.Args, dir),
			append(append([]string{}, e.opts.Env...), "TMPDIR="+tmp), stdout, stderr)
		if err != nil {
			return "", fmt.Errorf("%s: %w", prog, err)
		}
		if res.Stopped != "" && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", ctx.Err() // stopped by the user, or the call was withdrawn
		}
		res.Stdout, res.Stderr = stdout.String(), stderr.String()
		res.Truncated = stdout.truncated() || stderr.truncated()
		res.Sandbox, res.Network, res.DurationMS = sb.Describe(), a.Network, time.Since(start).Milliseconds()
		b, err := json.Marshal(res)
		return string(b), err
	}
	return c, nil
}

// runStopped runs cmd to its end, or until ctx ends or the Timeout passes:
// then the program and everything it started are stopped (procstop: its
// group and descendants, SIGINT, SIGTERM then SIGKILL a second apart).
// Whatever it left running when it exited is killed too.
func (e *Executor) runStopped(ctx context.Context, cmd *exec.Cmd, env []string, stdout, stderr io.Writer) (CommandResult, error) {
	var res CommandResult
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = 2 * time.Second
	cmd.Cancel = nil
	procstop.SetGroup(cmd)
	if err := cmd.Start(); err != nil {
		return res, err
	}
	tree := procstop.NewTree()
	exited := make(chan struct{})
	stopped := make(chan string, 1)
	var stopper sync.WaitGroup
	stopper.Go(func() {
		t := time.NewTimer(e.opts.Timeout)
		defer t.Stop()
		why := ""
		select {
		case <-exited:
			return
		case <-ctx.Done():
			why = "stopped"
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				why = "timed out"
			}
		case <-t.C:
			why = fmt.Sprintf("timed out after %s", e.opts.Timeout)
		}
		stopped <- why
		stages := procstop.Stages()
		for i, s := range stages {
			if errors.Is(tree.Signal(cmd, s), errors.ErrUnsupported) {
				continue
			}
			if i == len(stages)-1 {
				return
			}
			g := time.NewTimer(time.Second)
			select {
			case <-exited:
				g.Stop()
				return
			case <-g.C:
			}
		}
	})
	err := cmd.Wait()
	close(exited)
	stopper.Wait()
	tree.Kill(cmd) // what it left behind, in its group or seen while stopping it
	select {
	case res.Stopped = <-stopped:
	default:
	}
	var exit *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	default:
		return res, err
	}
	return res, nil
}
