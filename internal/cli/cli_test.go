package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, args ...string) (code int, handled bool, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string {
		if k == "XDG_DATA_HOME" {
			return t.TempDir()
		}
		return ""
	}}
	code, handled = Run(args, env)
	return code, handled, out.String(), errb.String()
}

// A launch that names no subcommand is the window's: Run leaves it.
func TestWindowFlagsAreNotACommand(t *testing.T) {
	for _, args := range [][]string{nil, {"--headless"}, {"--data-dir", "/tmp/x"}, {"nosuch"}} {
		if _, handled, _, _ := run(t, args...); handled {
			t.Errorf("Run(%q) claimed a window launch", args)
		}
	}
}

// help lists every command of the table, and not the hidden helper.
func TestHelpListsTheTable(t *testing.T) {
	code, handled, out, _ := run(t, "help")
	if !handled || code != 0 {
		t.Fatalf("help: handled %v code %d", handled, code)
	}
	for _, n := range Names() {
		if !strings.Contains(out, "jarvis "+n) {
			t.Errorf("help does not list %q:\n%s", n, out)
		}
	}
	if strings.Contains(out, confineName) {
		t.Errorf("help lists the hidden confinement helper:\n%s", out)
	}
}

func TestConfigWithoutApproveIsUsage(t *testing.T) {
	code, handled, _, errOut := run(t, "config", "show")
	if !handled || code != 2 || !strings.Contains(errOut, "jarvis config approve") {
		t.Fatalf("config show: handled %v code %d stderr %q", handled, code, errOut)
	}
}

func TestInboxOfAnEmptyDataDir(t *testing.T) {
	dir := t.TempDir()
	code, _, out, errOut := run(t, "inbox", "--data-dir", dir)
	if code != 1 || !strings.Contains(errOut, "jarvis inbox: no Jarvis data in "+dir) || !strings.Contains(errOut, "the Inbox is empty") {
		t.Fatalf("inbox of a folder with no data: code %d stdout %q stderr %q", code, out, errOut)
	}
	if code, _, _, _ := run(t, "inbox", "allow"); code != 2 {
		t.Fatalf("inbox allow without an id: code %d, want 2", code)
	}
}

// mcp import copies another app's servers into mcp.json, a real file.
func TestMCPImportFromAFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "claude.json")
	if err := os.WriteFile(src, []byte(`{"mcpServers":{"echo":{"command":"npx","args":["-y","@modelcontextprotocol/server-everything"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "mcp.json")
	code, _, out, errOut := run(t, "mcp", "import", "--from", src, "--mcp-config", dst)
	if code != 0 {
		t.Fatalf("mcp import: code %d stderr %q", code, errOut)
	}
	if !strings.Contains(out, "imported 1 server(s)") {
		t.Fatalf("mcp import said %q", out)
	}
	b, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &got); err != nil || got.MCPServers["echo"] == nil {
		t.Fatalf("mcp.json after import: %s (%v)", b, err)
	}
}
