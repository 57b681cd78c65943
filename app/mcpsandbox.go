package app

// The sandbox of MCP stdio servers (mcp.Options.Confine): every server
// Jarvis starts runs inside the same sandbox as run_command (tools.Sandbox):
// it writes only in its folder (its "cwd" in mcp.json) and a temporary
// folder of its own, Jarvis's protected folders are out of its reach, it
// reaches no Unix socket and no process outside, and it has the network
// only when its entry says "network": true.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"jarvis/app/mcp"
	"jarvis/tools"
)

// MCPSandbox returns the Confine hook of the MCP manager: helper is the
// confinement helper (tools.Options.ConfineHelper), protected the folders
// NewToolRunner protects (ToolRunnerOptions.ProtectedPaths). A server whose
// entry says "sandbox": false runs as it is: the Manager starts it only
// once the user approved that entry, whose approval says it runs without
// the sandbox (mcp.Approval.Unsandboxed), and logs that it does.
func MCPSandbox(helper, protected []string) func(mcp.ServerConfig, *exec.Cmd) (*exec.Cmd, func(), error) {
	base := tools.NewSandbox(helper, protected)
	return func(cfg mcp.ServerConfig, cmd *exec.Cmd) (*exec.Cmd, func(), error) {
		if cfg.Unsandboxed() {
			return cmd, func() {}, nil
		}
		if cmd.Err != nil {
			return nil, nil, cmd.Err
		}
		path := cmd.Path
		if !filepath.IsAbs(path) {
			return nil, nil, errors.New("the server's program has no absolute path")
		}
		tmp, err := os.MkdirTemp("", "jarvis-mcp-")
		if err != nil {
			return nil, nil, err
		}
		writable := []string{tmp}
		dir := cmd.Dir
		if dir != "" {
			abs, err := filepath.Abs(dir)
			if err != nil {
				os.RemoveAll(tmp)
				return nil, nil, err
			}
			dir = abs
			writable = append(writable, abs)
		}
		sb := base
		sb.Writable, sb.Network = writable, cfg.Network
		c := sb.Command(path, cmd.Args[1:], dir)
		// npm's cache goes to the temporary folder: ~/.npm is outside.
		c.Env = append(append([]string{}, cmd.Env...), "TMPDIR="+tmp, "npm_config_cache="+filepath.Join(tmp, "npm"))
		c.Stderr = cmd.Stderr
		return c, func() { os.RemoveAll(tmp) }, nil
	}
}

// AgentSandbox is the sandbox of the coding-agent CLIs the in-process
// service starts (service.Options.Sandbox): helper as for MCPSandbox, and
// the folders NewToolRunner protects for a runner whose data lives in
// dataDir.
func AgentSandbox(helper []string, dataDir string) *tools.Sandbox {
	sb := tools.NewSandbox(helper, ToolRunnerOptions{DataDir: dataDir, AuditPath: filepath.Join(dataDir, "audit.db")}.ProtectedPaths())
	return &sb
}
