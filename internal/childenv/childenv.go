// Package childenv owns the environment of every program Jarvis starts:
// run_command and the launchers and helpers of the OS tools (tools), the
// CLI agents (service/cliagent), the processes of tests and benchmarks
// (internal/proc), and any later starter (ACP agents, MCP servers). Each
// builds its child's environment with Scrub, so none of them hands a child
// the service's API token or the secrets given to Jarvis in its
// environment.
package childenv

import "strings"

// Policy says what Scrub removes.
type Policy int

const (
	// JarvisSecrets removes Jarvis's own secrets: JARVIS_TOKEN and every
	// JARVIS_SECRET_<REF>. For programs the user chose and configured (CLI
	// agents, launched apps, helpers), which may need their own
	// credentials (ANTHROPIC_API_KEY and the like).
	JarvisSecrets Policy = iota
	// AllCredentials also removes every variable whose name looks like it
	// holds a credential (…TOKEN…, …SECRET…, …PASSWORD…, …_KEY, …): for
	// programs a model chooses to run (run_command).
	AllCredentials
)

// Scrub returns env ("NAME=value" entries) without the variables p removes.
// Names are compared without regard to case: Windows treats them so.
func Scrub(env []string, p Policy) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if drops(strings.ToUpper(name), p) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func drops(n string, p Policy) bool {
	if n == "JARVIS_TOKEN" || strings.HasPrefix(n, "JARVIS_SECRET_") {
		return true
	}
	if p != AllCredentials {
		return false
	}
	return strings.Contains(n, "TOKEN") || strings.Contains(n, "SECRET") || strings.Contains(n, "PASSWORD") ||
		strings.Contains(n, "PASSWD") || strings.Contains(n, "CREDENTIAL") || strings.HasSuffix(n, "_KEY") ||
		strings.Contains(n, "_KEY_") || strings.Contains(n, "APIKEY")
}
