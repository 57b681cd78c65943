// Package cli is the jarvis binary's command line other than the window:
// the one table of its subcommands (undo, mcp, config, inbox, backup,
// restore, export, help and the hidden confinement helper and MCP bridge) with their
// flags, and the files the window and the subcommands share (paths.go).
// main asks Run first; a launch no subcommand claims opens the window.
package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Env is what a subcommand reads and writes: the process's standard
// streams and environment, passed in so that tests run a subcommand in
// process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// command is one row of the table: its name, the usage lines `jarvis help`
// prints, and what runs it (args without the command's name).
type command struct {
	usage  []string
	hidden bool
	run    func(args []string, env Env) int
}

// commands is the table; every subcommand of `jarvis` is here and nowhere
// else.
var commands = map[string]command{
	"undo": {usage: []string{
		"jarvis undo list [--session ID] [--json]      the turns whose file changes can be undone",
		"jarvis undo turn TURN_ID [--file PATH]… [--force]   put a turn's files back",
	}, run: runUndo},
	"mcp": {usage: []string{
		"jarvis mcp list | approve [NAME] [--yes] | enable NAME | disable NAME",
		"jarvis mcp secret set SERVER NAME             store a server's secret in the keyring",
		"jarvis mcp login SERVER | logout SERVER       sign in to a remote server (OAuth) or forget its tokens",
		"jarvis mcp import [--from claude|cursor|FILE] copy another app's MCP servers",
	}, run: runMCP},
	"config": {usage: []string{
		"jarvis config approve [--yes]                 approve a config file Jarvis did not write",
	}, run: runConfig},
	"inbox": {usage: []string{
		"jarvis inbox [--all] | done ID | allow ID | deny ID   scheduled runs, answers and approvals",
	}, run: runInbox},
	"backup": {usage: []string{
		"jarvis backup FILE                            one archive of conversations, memory and settings (never secrets)",
	}, run: backupRunner("backup")},
	"restore": {usage: []string{
		"jarvis restore [--force] FILE                 put a backup back",
	}, run: backupRunner("restore")},
	"export": {usage: []string{
		"jarvis export [--format md|json] FILE         every conversation, readable",
	}, run: backupRunner("export")},
	confineName: {hidden: true, run: runConfine},
	bridgeName:  {hidden: true, run: runMCPBridge},
}

func init() {
	commands["help"] = command{usage: []string{"jarvis help                                   this list"},
		run: func(_ []string, env Env) int { Usage(env.Stdout); return 0 }}
}

// Run runs the subcommand args name. handled is false when args name
// none: the launch opens the window (or runs --headless).
func Run(args []string, env Env) (code int, handled bool) {
	if len(args) == 0 {
		return 0, false
	}
	c, ok := commands[args[0]]
	if !ok {
		return 0, false
	}
	return c.run(args[1:], env), true
}

// Names lists the subcommands a user may type, sorted (the hidden
// confinement helper aside).
func Names() []string {
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Usage prints every subcommand's usage, then points at the window's
// flags.
func Usage(w io.Writer) {
	names := Names()
	fmt.Fprintln(w, "usage: jarvis [flags]          open the window (jarvis --help lists the flags)")
	fmt.Fprintln(w, "       jarvis --headless       no window: the policy answers, scheduled tasks run")
	for _, n := range names {
		for _, u := range commands[n].usage {
			fmt.Fprintln(w, "       "+u)
		}
	}
	fmt.Fprintln(w, "More: docs/reference/cli.md")
}

// fail prints "jarvis <what>: err" and returns 1.
func fail(env Env, what string, err error) int {
	fmt.Fprintf(env.Stderr, "jarvis %s: %s\n", strings.TrimSpace(what), err)
	return 1
}
