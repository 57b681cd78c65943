package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type runArgs struct {
	Program *string  `json:"program"`
	Args    []string `json:"args"`
	Cwd     string   `json:"cwd"`
}

// CommandResult is run_command's result, returned as JSON. A non-zero exit
// is a result, not an error: the program ran.
type CommandResult struct {
	ExitCode  int    `json:"exit_code"`
	Stdout    string `json:"stdout"`
	Stderr    string `json:"stderr,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
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
	}
	if !e.allow[key] {
		return nil, fmt.Errorf("%w: program %q is not on the command allowlist", ErrNotAllowed, prog)
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
	// Said in every prompt: what a program does is not checkpointed.
	c.note = "commands cannot be undone; " + e.Confinement()
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
		ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
		defer cancel()
		stdout := &capBuffer{max: e.opts.OutputCap}
		stderr := &capBuffer{max: e.opts.OutputCap}
		cmd := exec.CommandContext(ctx, path, a.Args...)
		cmd.Env = e.opts.Env
		if e.confined() {
			tmp, err := os.MkdirTemp("", "jarvis-cmd-")
			if err != nil {
				return "", err
			}
			defer os.RemoveAll(tmp)
			argv := append(append([]string{}, e.opts.ConfineHelper[1:]...), "--rw", e.ws.real, "--rw", tmp, "--", path)
			cmd = exec.CommandContext(ctx, e.opts.ConfineHelper[0], append(argv, a.Args...)...)
			cmd.Env = append(append([]string{}, e.opts.Env...), "TMPDIR="+tmp)
		}
		cmd.Dir = dir
		cmd.Stdout = stdout
		cmd.Stderr = stderr
		cmd.WaitDelay = 2 * time.Second
		killGroup(cmd)
		err := cmd.Run()
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return "", fmt.Errorf("%s: %w after %s", prog, ErrTimeout, e.opts.Timeout)
			}
			return "", ctx.Err()
		}
		res := CommandResult{Stdout: stdout.String(), Stderr: stderr.String(), Truncated: stdout.truncated() || stderr.truncated()}
		var exit *exec.ExitError
		switch {
		case err == nil, errors.Is(err, exec.ErrWaitDelay):
		case errors.As(err, &exit):
			res.ExitCode = exit.ExitCode()
		default:
			return "", fmt.Errorf("%s: %w", prog, err)
		}
		b, err := json.Marshal(res)
		return string(b), err
	}
	return c, nil
}
