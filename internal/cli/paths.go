package cli

import (
	"os"
	"path/filepath"
	"runtime"

	"jarvis/app/inbox"
	"jarvis/service/acprt"
	"jarvis/tools"
)

// DefaultMCPConfig is <user config dir>/jarvis/mcp.json.
func DefaultMCPConfig() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "jarvis", "mcp.json"), nil
}

// SecretsFile is where API keys go when no OS keyring answers: beside the
// config file.
func SecretsFile(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), "secrets.json")
}

// TasksFile is tasks.json, beside the config file.
func TasksFile(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), "tasks.json")
}

// Unit is the systemd user unit of "Run tasks when Jarvis is closed" for
// this binary and these folders; nil where there is no systemd (not
// Linux) or the binary cannot name itself.
func Unit(dataDir, configPath, workspace string) *inbox.UnitOptions {
	if runtime.GOOS != "linux" {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	args := []string{"--data-dir", dataDir, "--config", configPath}
	if workspace != "" {
		args = append(args, "--workspace", workspace)
	}
	return &inbox.UnitOptions{Exe: exe, Args: args}
}

// confineName is the hidden subcommand programs are started through
// (tools.ConfineMain).
const confineName = tools.ConfineSubcommand

// bridgeName is the hidden subcommand an ACP agent that takes MCP servers
// only over stdio starts to reach Jarvis's MCP endpoint (acprt.Bridge).
const bridgeName = acprt.BridgeSubcommand
