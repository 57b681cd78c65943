package gate

// The command policy: rules over run_command (and so over ACP terminals,
// which are run_command calls) by program and argument prefix, scoped to a
// workspace, and the small read-only set that runs with no prompt.
//
// A command rule is a Rule with Tool "run_command" and Command set:
// "git status" matches exactly `git status`; "git diff *" matches `git
// diff` with any further arguments (none included); each other word is a
// glob over one argument (Rule's glob syntax). A word without a slash names
// a program looked up on PATH, as the call named it; an absolute path
// matches that path. An allow rule covers a call that asks for the network
// only when the rule says Network. Workspace, when set, limits the rule to
// that workspace.
//
// The default read-only set (DefaultCommands) applies when no rule of the
// user's policy matches: a few programs that only read (ls, cat, grep, rg,
// git status, git log, git diff…), and only when every argument stays in
// the working folder: no absolute path, no "~", no "..", no hidden file or
// folder (".env", ".ssh/…"), no option that runs another program or writes
// a file, no recursive grep, no network. Anything else prompts.
//
// A shell's command line (sh -c '…') always prompts, whatever the rules
// allow (tools.Assessment.AlwaysAsk); a deny rule still denies it.

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// commandTool is the tool command rules apply to.
const commandTool = "run_command"

// DefaultCommands is the read-only set that runs with no prompt when no
// rule of the policy decides (see the comment above for the arguments it
// accepts). The Permissions page lists it.
var DefaultCommands = []Rule{
	{Tool: commandTool, Command: "ls *", Action: Allow},
	{Tool: commandTool, Command: "pwd", Action: Allow},
	{Tool: commandTool, Command: "cat *", Action: Allow},
	{Tool: commandTool, Command: "head *", Action: Allow},
	{Tool: commandTool, Command: "tail *", Action: Allow},
	{Tool: commandTool, Command: "wc *", Action: Allow},
	{Tool: commandTool, Command: "grep *", Action: Allow},
	{Tool: commandTool, Command: "rg *", Action: Allow},
	{Tool: commandTool, Command: "git status *", Action: Allow},
	{Tool: commandTool, Command: "git log *", Action: Allow},
	{Tool: commandTool, Command: "git diff *", Action: Allow},
	{Tool: commandTool, Command: "git show *", Action: Allow},
	{Tool: commandTool, Command: "git branch", Action: Allow},
	{Tool: commandTool, Command: "git rev-parse *", Action: Allow},
}

// unsafeOptions make a read-only program run another program, write a
// file, follow every link or read hidden files: a call with one is not
// covered by DefaultCommands.
var unsafeOptions = []string{
	"--output", "-o", "--ext-diff", "--textconv", "--pre", "--pre-glob", "--search-zip", "-z",
	"--hidden", "-.", "-u", "-uu", "-uuu", "--no-ignore", "-L", "--follow",
	"-r", "-R", "--recursive", "--dereference-recursive", "--exec", "-exec", "--open-files-in-pager", "-O",
}

// commandWords splits a rule's Command into words: spaces separate them,
// single quotes keep spaces inside one (as the prompt shows arguments).
func commandWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	in, quoted, started := false, false, false
	for _, r := range s {
		switch {
		case r == '\'':
			in, quoted, started = !in, true, true
		case r == ' ' && !in:
			if started {
				words = append(words, cur.String())
				cur.Reset()
				started, quoted = false, false
			}
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if in {
		return nil, fmt.Errorf("command %q has an unclosed quote", s)
	}
	if started || quoted {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("command is empty")
	}
	return words, nil
}

// validateCommand checks a command rule.
func (r Rule) validateCommand() error {
	if r.Command == "" {
		if r.Network && !globMatch(r.Tool, commandTool) {
			return fmt.Errorf("network applies only to rules over %s", commandTool)
		}
		return nil
	}
	if r.Tool != commandTool {
		return fmt.Errorf("a command rule's tool must be %s", commandTool)
	}
	words, err := commandWords(r.Command)
	if err != nil {
		return err
	}
	for _, w := range words {
		if err := checkGlob(w); err != nil {
			return err
		}
	}
	if r.Workspace != "" && !path.IsAbs(r.Workspace) && !strings.Contains(r.Workspace, `:\`) {
		return fmt.Errorf("workspace %q must be an absolute folder", r.Workspace)
	}
	return nil
}

// matchesCommand reports whether a command rule covers the run_command
// call args (its canonical form).
func (r Rule) matchesCommand(args map[string]json.RawMessage) bool {
	words, err := commandWords(r.Command)
	if err != nil {
		return false
	}
	argv := append([]string{argValue(args, "program")}, callArgs(args)...)
	for i, w := range words {
		if i == len(words)-1 && w == "*" && i > 0 {
			return true // any further arguments, none included
		}
		if i >= len(argv) || !globMatch(w, argv[i]) {
			return false
		}
	}
	return len(argv) == len(words)
}

func callArgs(args map[string]json.RawMessage) []string {
	var list []string
	json.Unmarshal(args["args"], &list)
	return list
}

func callNetwork(args map[string]json.RawMessage) bool {
	var b bool
	json.Unmarshal(args["network"], &b)
	return b
}

// defaultCommand returns the rule of DefaultCommands that covers the call,
// or nil; see the comment at the top for what the arguments may be.
func defaultCommand(tool string, args map[string]json.RawMessage) *Rule {
	if tool != commandTool || callNetwork(args) {
		return nil
	}
	for _, a := range callArgs(args) {
		if !staysHere(a) {
			return nil
		}
	}
	for i := range DefaultCommands {
		if DefaultCommands[i].matchesCommand(args) {
			r := DefaultCommands[i]
			return &r
		}
	}
	return nil
}

// staysHere reports whether one argument of a default command keeps to the
// working folder and asks for nothing beyond reading.
func staysHere(a string) bool {
	if strings.HasPrefix(a, "/") || strings.HasPrefix(a, "~") || strings.ContainsAny(a, "\\") {
		return false
	}
	opt, _, _ := strings.Cut(a, "=")
	for _, u := range unsafeOptions {
		if opt == u {
			return false
		}
	}
	if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 2 {
		// Bundled short options (-rn): each letter counts.
		for _, c := range a[1:] {
			for _, u := range unsafeOptions {
				if len(u) == 2 && u[1] == byte(c) {
					return false
				}
			}
		}
	}
	for _, part := range strings.Split(a, "/") {
		if part == ".." || (strings.HasPrefix(part, ".") && part != ".") {
			return false
		}
	}
	return true
}

// commandScopes are the rules "Always allow" offers for a run_command
// call: the narrowest useful prefix first (the program and its first
// argument when that is not an option, then any further arguments: "git
// status *", "npm run *"), then the exact command line, then the program with any
// arguments; each limited to the workspace, and carrying the network when
// the call asked for it.
func commandScopes(args map[string]json.RawMessage, workspace string) []Scope {
	program := argValue(args, "program")
	list := callArgs(args)
	net := callNetwork(args)
	with := func(words []string, more bool) Rule {
		q := make([]string, len(words))
		for i, w := range words {
			q[i] = ruleWord(w)
		}
		if more {
			q = append(q, "*")
		}
		return Rule{Tool: commandTool, Command: strings.Join(q, " "), Workspace: workspace, Network: net, Action: Allow}
	}
	where := ""
	if workspace != "" {
		where = " in this workspace"
	}
	if net {
		where += ", with network"
	}
	var out []Scope
	prefix := []string{program}
	if len(list) > 0 && !strings.HasPrefix(list[0], "-") {
		prefix = append(prefix, list[0])
	}
	out = append(out, Scope{Label: shellLine(prefix) + " with any further arguments" + where, Rule: with(prefix, true)})
	exact := append([]string{program}, list...)
	if len(exact) > len(prefix) || len(list) == 0 {
		out = append(out, Scope{Label: "exactly " + shellLine(exact) + where, Rule: with(exact, false)})
	}
	if len(prefix) > 1 {
		out = append(out, Scope{Label: program + " with any arguments" + where, Rule: with([]string{program}, true)})
	}
	return out
}

// ruleWord quotes one argv element for a rule's Command: globs escaped,
// single-quoted when it has a space.
func ruleWord(s string) string {
	g := escapeGlob(s)
	if strings.ContainsAny(g, " ") || g == "" {
		return "'" + g + "'"
	}
	return g
}

// shellLine renders argv for a label.
func shellLine(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellWord(a)
	}
	return strings.Join(q, " ")
}
