package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testwait"
)

// TestConfigChangedOutsideJarvisWaitsForApproval: config.json can start
// programs and send secrets to URLs, so a file Jarvis did not write — by
// hand before the first start, or changed later by another program (an
// agent's write) — is not applied until the user approves it from a
// terminal; the approval then applies it at once.
func TestConfigChangedOutsideJarvisWaitsForApproval(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	agents := func(extra string) string {
		return fmt.Sprintf(`{"agents":[{"agentId":"general"},{"agentId":"helper"}%s]}`, extra)
	}
	cfg := writeConfig(t, dir, agents(""))
	p := start(t, []string{"JARVIS_TOKEN=t"}, "--addr", "127.0.0.1:0", "--data-dir", data, "--config", cfg)
	c := api.NewClient(p.URL, "t", nil)
	list := func() ([]string, string) {
		var l api.AgentList
		if err := c.Do(context.Background(), "GET", "/v1/agents", nil, &l); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range l.Agents {
			ids = append(ids, a.AgentID)
		}
		return ids, l.Warning
	}
	// A file written by hand before the first start: one approval.
	ids, warning := list()
	if slices.Contains(ids, "helper") || !strings.Contains(warning, "not applied until you approve it") {
		t.Fatalf("a config Jarvis did not write was applied at start without approval: agents %v, warning %q", ids, warning)
	}
	approve := func(stdin string, args ...string) (string, error) {
		cmd := exec.Command(binPath, append([]string{"config", "approve", "--config", cfg, "--data-dir", data}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	if out, err := approve("n\n"); err == nil || !strings.Contains(out, "Not approved") {
		t.Fatalf("declined approval: %v %s", err, out)
	}
	if out, err := approve("y\n"); err != nil || !strings.Contains(out, "starts no program and connects nowhere") {
		t.Fatalf("approval: %v %s", err, out)
	}
	testwait.Until(t, "the approved config applied", 10*time.Second, func() bool {
		ids, warning := list()
		return slices.Contains(ids, "helper") && warning == ""
	})

	// A later change by another program (an agent's write_file, a script):
	// the running config stays, the warning says what it would do.
	evil := `,{"agentId":"evil","chat":{"provider":"openai-compatible","baseUrl":"http://127.0.0.1:9/v1","model":"m"}}`
	if err := os.WriteFile(cfg, []byte(agents(evil)), 0o600); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, "the unapproved change refused with a warning saying where it would connect", 10*time.Second, func() bool {
		_, warning := list()
		return strings.Contains(warning, "connects to http://127.0.0.1:9/v1")
	})
	if ids, _ := list(); slices.Contains(ids, "evil") || !slices.Contains(ids, "helper") {
		t.Fatalf("agents after an unapproved change: %v", ids)
	}
	out, err := approve("", "--yes")
	if err != nil || !strings.Contains(out, "connects to http://127.0.0.1:9/v1") {
		t.Fatalf("approval: %v %s", err, out)
	}
	testwait.Until(t, "the approved change applied", 10*time.Second, func() bool {
		ids, warning := list()
		return slices.Contains(ids, "evil") && warning == ""
	})
	if out, err := approve("", "--yes"); err != nil || !strings.Contains(out, "already approved") {
		t.Fatalf("second approval: %v %s", err, out)
	}
	if !strings.Contains(p.Stderr(), "not applied until approved") {
		t.Errorf("the refusal is not logged:\n%s", p.Stderr())
	}
}
