package app

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"jarvis/app/mcp"
	"jarvis/internal/approved"
	"jarvis/internal/instance"
)

const mcpUsage = `usage:
  jarvis mcp list [--data-dir DIR] [--mcp-config FILE]
  jarvis mcp approve [SERVER | mcp__SERVER__TOOL] [--yes] [--data-dir DIR] [--mcp-config FILE]
  jarvis mcp enable SERVER | jarvis mcp disable SERVER
  jarvis mcp secret set SERVER NAME   (the value is read from standard input)
  jarvis mcp login SERVER | jarvis mcp logout SERVER
  jarvis mcp import [--from claude|cursor|FILE] [--mcp-config FILE]
`

// mcpOp is the control socket request `jarvis mcp` sends.
const mcpOp = "mcp"

// mcpRequest is one `jarvis mcp` request, done by the running Jarvis or,
// when none runs, by the command itself (mcpControl).
type mcpRequest struct {
	Cmd  string `json:"cmd"` // list | approve-config | approve-tool | enable | disable | restart
	Name string `json:"name,omitempty"`
	Hash string `json:"hash,omitempty"`
}

// mcpControl does req on m and answers with the state after it.
func mcpControl(m *mcp.Manager, req mcpRequest) (MCPState, error) {
	var err error
	switch req.Cmd {
	case "list":
	case "approve-config":
		err = m.ApproveConfig(req.Hash)
	case "approve-tool":
		err = m.Approve(req.Name, req.Hash)
	case "enable", "disable":
		err = m.SetServerEnabled(req.Name, req.Cmd == "enable")
	case "restart":
		err = m.Restart(req.Name)
	default:
		err = fmt.Errorf("this Jarvis does not know the MCP request %q", req.Cmd)
	}
	if err != nil {
		return MCPState{}, err
	}
	ss, cerr := m.Servers()
	return MCPState{Servers: ss, ConfigError: cerr, ConfigPath: m.ConfigPath()}, nil
}

// MCPCommandOptions is what `jarvis mcp` needs from main.
type MCPCommandOptions struct {
	DefaultDataDir   func() (string, error)
	DefaultMCPConfig func() (string, error)
	// SetSecret stores a secret in the secret store (`secret set`, login).
	SetSecret func(ref, value string) error
	// Secret reads one (login: the entry's "${keyring:NAME}" headers and
	// client secret).
	Secret func(ref string) (string, error)
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// MCPCommand runs `jarvis mcp list|approve|enable|disable|secret set` and
// returns the exit status. While a window or `jarvis --headless` runs on
// the data dir, the request is handed to it over the control socket
// (ServeUndo), so it applies at once; otherwise the command reads mcp.json
// and the data dir itself and starts nothing. approve shows what it
// approves (the commands the waiting entries would run, or the changed tool
// definition) and asks before it approves exactly that (its hash).
func MCPCommand(args []string, o MCPCommandOptions) int {
	fail := func(err error) int { fmt.Fprintln(o.Stderr, "jarvis mcp:", err); return 1 }
	if len(args) == 0 {
		io.WriteString(o.Stderr, mcpUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("jarvis mcp "+sub, flag.ContinueOnError)
	fs.SetOutput(o.Stderr)
	dataDir := fs.String("data-dir", "", "data directory (default: the platform data dir)")
	cfgPath := fs.String("mcp-config", "", "the MCP servers file (default: <user config dir>/jarvis/mcp.json)")
	yes := fs.Bool("yes", false, "approve without asking (what is approved is still printed)")
	var pos []string
	rest := args[1:]
	for len(rest) > 0 { // flags and words in any order
		if err := fs.Parse(rest); err != nil {
			return 2
		}
		rest = fs.Args()
		if len(rest) > 0 {
			pos, rest = append(pos, rest[0]), rest[1:]
		}
	}
	var err error
	if *dataDir == "" {
		if *dataDir, err = o.DefaultDataDir(); err != nil {
			return fail(err)
		}
	}
	if *cfgPath == "" {
		if *cfgPath, err = o.DefaultMCPConfig(); err != nil {
			return fail(err)
		}
	}
	if sub == "secret" {
		if len(pos) != 3 || pos[0] != "set" {
			io.WriteString(o.Stderr, mcpUsage)
			return 2
		}
		return mcpSecretSet(pos[1], pos[2], *dataDir, o)
	}
	if sub == "login" || sub == "logout" {
		if len(pos) != 1 {
			io.WriteString(o.Stderr, mcpUsage)
			return 2
		}
		return mcpLogin(sub == "login", pos[0], *cfgPath, *dataDir, o)
	}
	do, closeFn, err := mcpDoer(*dataDir, *cfgPath)
	if err != nil {
		return fail(err)
	}
	defer closeFn()
	switch sub {
	case "list":
		st, err := do(mcpRequest{Cmd: "list"})
		if err != nil {
			return fail(err)
		}
		printMCP(o.Stdout, st)
		return 0
	case "enable", "disable":
		if len(pos) != 1 {
			io.WriteString(o.Stderr, mcpUsage)
			return 2
		}
		if _, err := do(mcpRequest{Cmd: sub, Name: pos[0]}); err != nil {
			return fail(err)
		}
		fmt.Fprintf(o.Stdout, "%sd %s\n", sub, pos[0])
		return 0
	case "approve":
		if len(pos) > 1 {
			io.WriteString(o.Stderr, mcpUsage)
			return 2
		}
		name := ""
		if len(pos) == 1 {
			name = pos[0]
		}
		return mcpApprove(do, name, *yes, o)
	}
	io.WriteString(o.Stderr, mcpUsage)
	return 2
}

// mcpDoer returns how requests are done: by the running Jarvis, or here on
// a Manager that starts nothing.
func mcpDoer(dataDir, cfgPath string) (func(mcpRequest) (MCPState, error), func(), error) {
	lock, lerr := instance.Acquire(dataDir)
	if errors.Is(lerr, instance.ErrRunning) {
		return func(req mcpRequest) (MCPState, error) {
			var st MCPState
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := instance.Call(ctx, dataDir, mcpOp, req, &st)
			if errors.Is(err, instance.ErrNotListening) {
				err = errors.New("a Jarvis runs on this data dir but does not answer; try again once it has started")
			}
			return st, err
		}, func() {}, nil
	}
	if lerr != nil {
		return nil, nil, lerr
	}
	store, err := approved.Open(dataDir)
	if err != nil {
		lock.Release()
		return nil, nil, err
	}
	m, err := mcp.New(mcp.Options{ConfigPath: cfgPath, StatePath: filepath.Join(dataDir, "mcp-state.json"), Approved: store, Inspect: true})
	if err != nil {
		lock.Release()
		return nil, nil, err
	}
	m.Reload()
	return func(req mcpRequest) (MCPState, error) {
		if req.Cmd == "approve-tool" {
			return MCPState{}, errors.New("tool definitions are known only to a running Jarvis: start it (jarvis --headless) and run this again")
		}
		return mcpControl(m, req)
	}, func() { m.Close(); lock.Release() }, nil
}

// mcpApprove shows what it would approve and approves that: the changed
// definition of tool name (an mcp__ name), or mcp.json's waiting entries
// (name, when given, must be one of them).
func mcpApprove(do func(mcpRequest) (MCPState, error), name string, yes bool, o MCPCommandOptions) int {
	st, err := do(mcpRequest{Cmd: "list"})
	if err != nil {
		fmt.Fprintln(o.Stderr, "jarvis mcp:", err)
		return 1
	}
	var req mcpRequest
	if mcp.IsToolName(name) {
		for _, s := range st.Servers {
			for _, t := range s.Tools {
				if t.Name == name && t.Changed {
					fmt.Fprintf(o.Stdout, "The definition of %s changed since it was approved. It now reads:\n  title: %s\n  description: %s\n  input schema: %s\n  hash: %s\n",
						name, t.Title, t.Description, t.InputSchema, t.Hash)
					req = mcpRequest{Cmd: "approve-tool", Name: name, Hash: t.Hash}
				}
			}
		}
		if req.Cmd == "" {
			fmt.Fprintf(o.Stderr, "jarvis mcp: %s is not a tool whose changed definition waits for approval (see jarvis mcp list)\n", name)
			return 1
		}
	} else {
		var waiting []mcp.ServerStatus
		for _, s := range st.Servers {
			if s.Approval != nil {
				waiting = append(waiting, s)
			}
		}
		if len(waiting) == 0 || name != "" && !hasServer(waiting, name) {
			fmt.Fprintln(o.Stderr, "jarvis mcp: no server of mcp.json waits for approval"+map[bool]string{true: "", false: " by the name " + name}[name == ""])
			return 1
		}
		fmt.Fprintf(o.Stdout, "%s was changed outside Jarvis. Approving it starts:\n", st.ConfigPath)
		for _, s := range waiting {
			printApproval(o.Stdout, s)
		}
		req = mcpRequest{Cmd: "approve-config", Hash: waiting[0].Approval.Hash}
	}
	if !yes {
		fmt.Fprint(o.Stdout, "Approve? [y/N] ")
		line, _ := bufio.NewReader(o.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(o.Stdout, "nothing approved")
			return 1
		}
	}
	if _, err := do(req); err != nil {
		fmt.Fprintln(o.Stderr, "jarvis mcp:", err)
		return 1
	}
	fmt.Fprintln(o.Stdout, "approved")
	return 0
}

func hasServer(ss []mcp.ServerStatus, name string) bool {
	for _, s := range ss {
		if s.Name == name || s.Label == name {
			return true
		}
	}
	return false
}

func printApproval(w io.Writer, s mcp.ServerStatus) {
	a := s.Approval
	verb := "runs"
	if s.Transport != "stdio" {
		verb = "connects to"
	}
	kind := "new"
	if a.Changed {
		kind = "changed"
	}
	fmt.Fprintf(w, "  %s (%s) %s: %s\n", s.Label, kind, verb, a.Launch)
	if a.Cwd != "" {
		fmt.Fprintf(w, "    in %s\n", a.Cwd)
	}
	if a.Sandbox != "" {
		fmt.Fprintf(w, "    %s\n", a.Sandbox)
	}
	for _, e := range a.Env {
		fmt.Fprintf(w, "    env %s\n", e)
	}
	for _, h := range a.Headers {
		fmt.Fprintf(w, "    header %s\n", h)
	}
}

// printMCP is `jarvis mcp list`.
func printMCP(w io.Writer, st MCPState) {
	if st.ConfigError != "" {
		fmt.Fprintf(w, "mcp.json was not applied: %s\n", st.ConfigError)
	}
	if len(st.Servers) == 0 {
		fmt.Fprintf(w, "no MCP servers in %s\n", st.ConfigPath)
	}
	for _, s := range st.Servers {
		fmt.Fprintf(w, "%s\t%s\t%s\n", s.Label, s.Transport, s.State)
		if s.Error != "" {
			first, _, _ := strings.Cut(s.Error, "\n")
			fmt.Fprintf(w, "  error: %s\n", first)
		}
		for _, x := range s.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", x)
		}
		if s.Approval != nil {
			printApproval(w, s)
			fmt.Fprintf(w, "  waits for approval: jarvis mcp approve %s\n", s.Name)
		}
		for _, t := range s.Tools {
			state := "on"
			switch {
			case t.Changed:
				state = "changed, waits for approval: jarvis mcp approve " + t.Name
			case t.Off:
				state = "off"
			}
			fmt.Fprintf(w, "  %s\t%s\n", t.Name, state)
		}
	}
}

// mcpSecretSet stores the first line of standard input as server's secret
// name, and has a running Jarvis start that server again.
func mcpSecretSet(server, name, dataDir string, o MCPCommandOptions) int {
	if o.SetSecret == nil {
		fmt.Fprintln(o.Stderr, "jarvis mcp: no secret store")
		return 1
	}
	line, err := bufio.NewReader(o.Stdin).ReadString('\n')
	value := strings.TrimRight(line, "\r\n")
	if value == "" {
		fmt.Fprintln(o.Stderr, "jarvis mcp: give the secret's value on standard input (one line)", err)
		return 1
	}
	if !mcp.ValidSecretName(server, name) {
		fmt.Fprintf(o.Stderr, "jarvis mcp: %q %q: a server name and a secret name are letters, digits, '.', '-' or '_'\n", server, name)
		return 1
	}
	if err := o.SetSecret(mcp.SecretRef(server, name), value); err != nil {
		fmt.Fprintln(o.Stderr, "jarvis mcp:", err)
		return 1
	}
	fmt.Fprintf(o.Stdout, "stored secret %q for MCP server %s: use it in mcp.json as \"${keyring:%s}\"\n", name, server, name)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var st MCPState
	if err := instance.Call(ctx, dataDir, mcpOp, mcpRequest{Cmd: "restart", Name: server}, &st); err == nil {
		fmt.Fprintf(o.Stdout, "the running Jarvis started %s again\n", server)
	}
	return 0
}

// mcpLogin signs in to (or out of) a url server of mcp.json here in the
// terminal: the authorization URL is printed to open in any browser on
// this computer (the redirect comes back to 127.0.0.1), the sign-in is
// stored with the server's secrets, and a running Jarvis starts the
// server again.
func mcpLogin(in bool, name, cfgPath, dataDir string, o MCPCommandOptions) int {
	fail := func(err error) int { fmt.Fprintln(o.Stderr, "jarvis mcp:", err); return 1 }
	cfg, err := mcp.LoadConfig(cfgPath)
	if err != nil {
		return fail(err)
	}
	var sc *mcp.ServerConfig
	for i := range cfg.Servers {
		if cfg.Servers[i].Name == name || cfg.Servers[i].Label == name {
			sc = &cfg.Servers[i]
		}
	}
	if sc == nil {
		return fail(fmt.Errorf("no server %q in %s", name, cfgPath))
	}
	if in {
		ctx, cancel := context.WithTimeout(context.Background(), signInWait)
		defer cancel()
		err = mcp.SignIn(ctx, *sc, mcp.SignInOptions{Secret: o.Secret, SetSecret: o.SetSecret, Open: func(u string) {
			fmt.Fprintf(o.Stdout, "To sign in to %s, open this address in a browser on this computer:\n\n  %s\n\nWaiting for the browser (up to %s)...\n", sc.Label, u, signInWait)
		}})
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = mcp.SignOut(ctx, sc.Name, mcp.SignInOptions{Secret: o.Secret, SetSecret: o.SetSecret})
		if errors.Is(err, mcp.ErrNotRevoked) { // forgotten here all the same
			fmt.Fprintln(o.Stderr, "jarvis mcp:", err)
			err = nil
		}
	}
	if err != nil {
		return fail(err)
	}
	if in {
		fmt.Fprintf(o.Stdout, "signed in to %s\n", sc.Label)
	} else {
		fmt.Fprintf(o.Stdout, "signed out of %s\n", sc.Label)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var st MCPState
	if err := instance.Call(ctx, dataDir, mcpOp, mcpRequest{Cmd: "restart", Name: sc.Name}, &st); err == nil {
		fmt.Fprintf(o.Stdout, "the running Jarvis started %s again\n", sc.Label)
	}
	return 0
}
