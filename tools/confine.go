package tools

// Confinement of run_command. A command cannot be undone (no checkpoint
// covers what a program does), so on Linux it runs confined with Landlock:
// it may read the whole file system but write only inside the workspace,
// its own temporary folder (TMPDIR, made for the call and removed after)
// and /dev/null. Landlock restricts the thread that asks and everything it
// starts afterwards, so it is never applied in the desktop itself: the
// program is started through a helper process (Options.ConfineHelper, the
// jarvis binary's hidden "__confine" subcommand) that restricts itself with
// ConfineMain and then execs the program. Where the kernel has no Landlock,
// or no helper is configured, commands run unconfined and the prompt says so.

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ConfineSubcommand is the jarvis binary's hidden subcommand that runs
// ConfineMain.
const ConfineSubcommand = "__confine"

// Confinement describes, for the prompt, how run_command's programs run.
func (e *Executor) Confinement() string {
	if abi := landlockABI(); abi > 0 && len(e.opts.ConfineHelper) > 0 {
		return fmt.Sprintf("confined by Landlock (ABI v%d): it can write only inside the workspace and its own temporary folder", abi)
	}
	if len(e.opts.ConfineHelper) == 0 {
		return "not confined: no confinement helper is configured, it can write wherever you can"
	}
	return "not confined: this system's kernel has no Landlock, it can write wherever you can"
}

// confined reports whether run_command starts programs through the helper.
func (e *Executor) confined() bool { return landlockABI() > 0 && len(e.opts.ConfineHelper) > 0 }

// ConfineMain is the helper: args are "--rw DIR"… "--" PROGRAM ARG…; it
// restricts the process with Landlock to writing only in the --rw folders
// and /dev/null, then replaces itself with PROGRAM (an absolute path). It
// returns only on failure.
func ConfineMain(args []string) error {
	var rw []string
	for len(args) > 0 && args[0] != "--" {
		if args[0] != "--rw" || len(args) < 2 {
			return fmt.Errorf("confine: usage: %s --rw DIR… -- PROGRAM ARG…", ConfineSubcommand)
		}
		rw = append(rw, args[1])
		args = args[2:]
	}
	if len(args) < 2 || !strings.HasPrefix(args[1], "/") {
		return errors.New("confine: an absolute program path must follow --")
	}
	if err := restrictWrites(rw); err != nil {
		return fmt.Errorf("confine: %w", err)
	}
	return execProgram(args[1], args[1:], os.Environ())
}
