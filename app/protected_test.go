package app

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"jarvis/api"
)

// fakeHome is a home folder used as the workspace, as the README offers:
// it holds Jarvis's config folder, its data dir (with trash and checkpoint
// store), a .ssh key and an .env, and links into them.
type fakeHome struct {
	home, cfg, data string
	runner          *Runner
	snapshot        map[string]string // protected file → content at start
}

const protectedMark = "sk-PROTECTED"

func newFakeHome(t *testing.T, policy string) *fakeHome {
	t.Helper()
	h := &fakeHome{home: t.TempDir()}
	t.Setenv("HOME", h.home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(h.home, ".config"))
	h.cfg = filepath.Join(h.home, ".config", "jarvis")
	h.data = filepath.Join(h.home, ".local", "share", "jarvis")
	files := map[string]string{
		filepath.Join(h.cfg, "config.json"):            `{"agents":[],"note":"` + protectedMark + `-config"}`,
		filepath.Join(h.cfg, "mcp.json"):               `{"servers":{},"note":"` + protectedMark + `-mcp"}`,
		filepath.Join(h.cfg, "secrets.json"):           `{"openai":"` + protectedMark + `-secret"}`,
		filepath.Join(h.data, "token"):                 protectedMark + "-token\n",
		filepath.Join(h.data, "trash", "x", "old.txt"): protectedMark + "-trashed\n",
		filepath.Join(h.data, "policy.json"):           policy,
		filepath.Join(h.home, "notes.txt"):             "hello\n",
		filepath.Join(h.home, ".ssh", "id_ed25519"):    "-----BEGIN OPENSSH PRIVATE KEY-----\n" + protectedMark + "-ssh\n",
		filepath.Join(h.home, "proj", ".env"):          "API_KEY=" + protectedMark + "-env\n",
	}
	for p, c := range files {
		mkfileApp(t, p, c)
	}
	for link, to := range map[string]string{"cfglink": h.cfg, "datalink": h.data} {
		if err := os.Symlink(to, filepath.Join(h.home, link)); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{"hl-secrets": filepath.Join(h.cfg, "secrets.json"), "hl-token": filepath.Join(h.data, "token")} {
		if err := os.Link(to, filepath.Join(h.home, link)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := NewToolRunner(ToolRunnerOptions{Workspace: h.home, AuditPath: filepath.Join(h.data, "audit.db"),
		PolicyPath: filepath.Join(h.data, "policy.json"), Headless: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	h.runner = r
	h.snapshot = map[string]string{}
	for _, p := range []string{"config.json", "mcp.json", "secrets.json", "audit/key"} {
		h.snap(t, filepath.Join(h.cfg, p))
	}
	for _, p := range []string{"token", "policy.json", "trash/x/old.txt"} {
		h.snap(t, filepath.Join(h.data, p))
	}
	return h
}

func (h *fakeHome) snap(t *testing.T, p string) {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("fake home: %v", err)
	}
	h.snapshot[p] = string(b)
}

// intact fails the test when a protected file changed or went away.
func (h *fakeHome) intact(t *testing.T) {
	t.Helper()
	for p, want := range h.snapshot {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("protected file %s changed: %q, %v", p, b, err)
		}
	}
}

func (h *fakeHome) run(t *testing.T, tool string, args map[string]any) ToolDecision {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return h.runner.Run(context.Background(), "s1", api.ToolCall{ID: "c", Name: tool, Arguments: raw})
}

func mkfileApp(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// allowFileTools is a policy that allows every file tool without a
// prompt: protection must hold even so.
const allowFileTools = `{"rules":[` +
	`{"tool":"read_file","action":"allow"},{"tool":"write_file","action":"allow"},{"tool":"edit_file","action":"allow"},` +
	`{"tool":"list_dir","action":"allow"},{"tool":"search_files","action":"allow"},{"tool":"make_dir","action":"allow"},` +
	`{"tool":"move_path","action":"allow"},{"tool":"delete_path","action":"allow"}]}`

// spellings are the ways a model may name a path of the fake home.
func spellings(h *fakeHome, rel string) map[string]string {
	out := map[string]string{
		"plain":    rel,
		"dot":      "./" + rel,
		"doubled":  strings.ReplaceAll(rel, "/", "//"),
		"absolute": filepath.Join(h.home, rel),
	}
	for prefix, link := range map[string]string{".config/jarvis": "cfglink", ".local/share/jarvis": "datalink"} {
		if rel == prefix || strings.HasPrefix(rel, prefix+"/") {
			out["symlink"] = link + strings.TrimPrefix(rel, prefix)
		}
	}
	switch rel {
	case ".config/jarvis/secrets.json":
		out["hardlink"] = "hl-secrets"
	case ".local/share/jarvis/token":
		out["hardlink"] = "hl-token"
	}
	return out
}

// callsOn are the calls of every file tool on one path (a file or a
// folder), the path as the source and as the destination.
func callsOn(p string, dir bool) []struct {
	tool string
	args map[string]any
} {
	type c = struct {
		tool string
		args map[string]any
	}
	calls := []c{
		{"delete_path", map[string]any{"path": p}},
		{"move_path", map[string]any{"from": p, "to": "stolen"}},
		{"make_dir", map[string]any{"path": p + "/sub"}},
		{"write_file", map[string]any{"path": p + "/new.txt", "content": "x"}},
		{"move_path", map[string]any{"from": "notes.txt", "to": p + "/notes.txt"}},
	}
	if dir {
		return append(calls,
			c{"list_dir", map[string]any{"path": p}},
			c{"search_files", map[string]any{"path": p, "content": protectedMark}},
			c{"search_files", map[string]any{"path": p, "name": "*"}},
		)
	}
	return append(calls[:2],
		c{"read_file", map[string]any{"path": p}},
		c{"write_file", map[string]any{"path": p, "content": "{}"}},
		c{"edit_file", map[string]any{"path": p, "old_string": protectedMark, "new_string": "x"}},
		c{"move_path", map[string]any{"from": "notes.txt", "to": p, "overwrite": true}},
	)
}

// TestProtectedSetEveryToolEverySpelling: with the home folder as the
// workspace, no file tool reaches Jarvis's config folder (secrets.json,
// config.json, mcp.json, the audit key), data dir (token, policy.json),
// trash or checkpoint store, under any spelling, through the real headless
// gate, even with every file tool allowed by the policy: each call is
// refused as forbidden, and nothing protected leaks or changes.
func TestProtectedSetEveryToolEverySpelling(t *testing.T) {
	h := newFakeHome(t, allowFileTools)
	files := []string{".config/jarvis/secrets.json", ".config/jarvis/config.json", ".config/jarvis/mcp.json",
		".config/jarvis/audit/key", ".local/share/jarvis/token", ".local/share/jarvis/policy.json",
		".local/share/jarvis/trash/x/old.txt"}
	dirs := []string{".config/jarvis", ".config/jarvis/audit", ".local/share/jarvis", ".local/share/jarvis/trash",
		".local/share/jarvis/checkpoints"}
	check := func(name string, d ToolDecision) {
		t.Helper()
		if d.Decision != "denied" || d.Class != "forbidden" {
			t.Errorf("%s: %s by %s (%s), want refused as forbidden; result %q", name, d.Decision, d.DecidedBy, d.Reason, d.Result)
		}
		if strings.Contains(d.Result, protectedMark) || strings.Contains(d.Error, protectedMark) {
			t.Errorf("%s: a protected file's content leaked: %q %q", name, d.Result, d.Error)
		}
	}
	n := 0
	for _, set := range []struct {
		paths []string
		dir   bool
	}{{files, false}, {dirs, true}} {
		for _, rel := range set.paths {
			for sp, p := range spellings(h, rel) {
				for _, c := range callsOn(p, set.dir) {
					check(fmt.Sprintf("%s %v (%s of %s)", c.tool, c.args, sp, rel), h.run(t, c.tool, c.args))
					n++
				}
			}
		}
	}
	// Ancestors: moving or deleting a folder that holds a protected one.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"move_path", map[string]any{"from": ".config", "to": "cx"}},
		{"move_path", map[string]any{"from": ".config/", "to": "cx"}},
		{"move_path", map[string]any{"from": ".local/share", "to": "sx"}},
		{"delete_path", map[string]any{"path": ".config"}},
		{"delete_path", map[string]any{"path": ".local"}},
		{"delete_path", map[string]any{"path": filepath.Join(h.home, ".local", "share")}},
	} {
		check(fmt.Sprintf("%s %v (ancestor)", c.tool, c.args), h.run(t, c.tool, c.args))
		n++
	}
	// Another case: on a case-sensitive disk it names another, missing
	// file, which must not lead to the protected one either.
	for _, p := range []string{".CONFIG/jarvis/secrets.json", ".config/JARVIS/secrets.json", ".Local/share/jarvis/token"} {
		d := h.run(t, "read_file", map[string]any{"path": p})
		if _, err := os.Stat(filepath.Join(h.home, p)); err == nil {
			check("read_file "+p+" (case-insensitive disk)", d)
		} else if d.OK || strings.Contains(d.Result, protectedMark) {
			t.Errorf("read_file %s: %+v", p, d)
		}
	}
	// A search over the whole home lists nothing protected, not even
	// through the hard links.
	d := h.run(t, "search_files", map[string]any{"content": protectedMark + "-secret"})
	if !d.OK || strings.Contains(d.Result, protectedMark) {
		t.Errorf("search of the home: %+v", d)
	}
	d = h.run(t, "search_files", map[string]any{"content": protectedMark + "-token"})
	if !d.OK || strings.Contains(d.Result, protectedMark) {
		t.Errorf("search of the home: %+v", d)
	}
	h.intact(t)
	// The rest of the home still works.
	if d := h.run(t, "read_file", map[string]any{"path": "notes.txt"}); !d.OK || !strings.Contains(d.Result, "hello") {
		t.Errorf("read notes.txt: %+v", d)
	}
	if d := h.run(t, "list_dir", map[string]any{"path": ".config"}); !d.OK {
		t.Errorf("list the config folder's parent: %+v", d)
	}
	t.Logf("%d calls refused", n)
}

// TestProtectedSetFollowsARenamedAncestor: a folder above Jarvis's config
// folder renamed behind Jarvis's back (by another program) does not shake
// the protection off: the config folder is known by identity.
func TestProtectedSetFollowsARenamedAncestor(t *testing.T) {
	h := newFakeHome(t, allowFileTools)
	if err := os.Rename(filepath.Join(h.home, ".config"), filepath.Join(h.home, ".cfg2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(h.home, ".local", "share"), filepath.Join(h.home, ".local", "sh2")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": ".cfg2/jarvis/secrets.json"}},
		{"read_file", map[string]any{"path": ".cfg2/jarvis/audit/key"}},
		{"list_dir", map[string]any{"path": ".cfg2/jarvis"}},
		{"write_file", map[string]any{"path": ".cfg2/jarvis/mcp.json", "content": "{}"}},
		{"move_path", map[string]any{"from": ".cfg2", "to": "cx"}},
		{"move_path", map[string]any{"from": ".cfg2/jarvis", "to": "cx"}},
		{"delete_path", map[string]any{"path": ".cfg2"}},
		{"read_file", map[string]any{"path": ".local/sh2/jarvis/token"}},
		{"delete_path", map[string]any{"path": ".local/sh2"}},
		{"search_files", map[string]any{"path": ".local/sh2/jarvis", "content": protectedMark}},
	} {
		d := h.run(t, c.tool, c.args)
		if d.Decision != "denied" || d.Class != "forbidden" || strings.Contains(d.Result, protectedMark) {
			t.Errorf("%s %v after a rename: %s %s (%s) %q", c.tool, c.args, d.Decision, d.Class, d.Reason, d.Result)
		}
	}
	if d := h.run(t, "search_files", map[string]any{"content": protectedMark + "-secret"}); !d.OK || strings.Contains(d.Result, protectedMark) {
		t.Errorf("search of the home after a rename: %+v", d)
	}
}

// TestCredentialStoresAsk: with the home folder as the workspace, a read,
// list or search of a well-known credential store asks first, even when
// the policy allows the tool, and the prompt says the file holds
// credentials (headless: denied); a search of the whole home leaves them
// out of its results.
func TestCredentialStoresAsk(t *testing.T) {
	h := newFakeHome(t, allowFileTools)
	creds := map[string]string{
		".aws/credentials":                         "[default]\naws_secret_access_key=" + protectedMark + "-aws\n",
		".netrc":                                   "machine x login u password " + protectedMark + "-netrc\n",
		".config/gh/hosts.yml":                     "github.com:\n  oauth_token: " + protectedMark + "-gh\n",
		".docker/config.json":                      `{"auths":{"x":{"auth":"` + protectedMark + `-docker"}}}`,
		".kube/config":                             "token: " + protectedMark + "-kube\n",
		".gnupg/private-keys-v1.d/k.key":           protectedMark + "-gpg\n",
		".mozilla/firefox/p.default/logins.json":   protectedMark + "-firefox\n",
		".config/google-chrome/Default/Login Data": protectedMark + "-chrome\n",
		".config/chromium/Default/Cookies":         protectedMark + "-chromium\n",
		"proj/deploy/server.pem":                   protectedMark + "-pem\n",
	}
	for p, c := range creds {
		mkfileApp(t, filepath.Join(h.home, p), c)
	}
	if err := os.Symlink(filepath.Join(h.home, ".ssh"), filepath.Join(h.home, "sshlink")); err != nil {
		t.Fatal(err)
	}
	paths := []string{".ssh/id_ed25519", "proj/.env"}
	for p := range creds {
		paths = append(paths, p)
	}
	check := func(name string, d ToolDecision) {
		t.Helper()
		if d.Decision != "denied" || !strings.Contains(d.Reason, "this file holds credentials") {
			t.Errorf("%s: %s by %s (%s), want a prompt saying the file holds credentials", name, d.Decision, d.DecidedBy, d.Reason)
		}
		if strings.Contains(d.Result, protectedMark) {
			t.Errorf("%s: credentials leaked: %q", name, d.Result)
		}
	}
	for _, rel := range paths {
		sp := spellings(h, rel)
		if strings.HasPrefix(rel, ".ssh/") {
			sp["symlink"] = "sshlink/" + strings.TrimPrefix(rel, ".ssh/")
		}
		for how, p := range sp {
			check(fmt.Sprintf("read_file %s (%s)", p, how), h.run(t, "read_file", map[string]any{"path": p}))
			check(fmt.Sprintf("write_file %s (%s)", p, how), h.run(t, "write_file", map[string]any{"path": p, "content": "x"}))
			check(fmt.Sprintf("edit_file %s (%s)", p, how), h.run(t, "edit_file", map[string]any{"path": p, "old_string": protectedMark, "new_string": "x"}))
			check(fmt.Sprintf("delete_path %s (%s)", p, how), h.run(t, "delete_path", map[string]any{"path": p}))
		}
	}
	for _, dir := range []string{".gnupg/private-keys-v1.d", ".mozilla/firefox", ".config/google-chrome/Default"} {
		check("list_dir "+dir, h.run(t, "list_dir", map[string]any{"path": dir}))
		check("search_files "+dir, h.run(t, "search_files", map[string]any{"path": dir, "content": protectedMark}))
	}
	for _, args := range []map[string]any{{"content": protectedMark}, {"name": "*"}, {"name": "id_*"}, {"path": ".ssh", "name": "*"}, {"name": ".env"}} {
		d := h.run(t, "search_files", args)
		if !d.OK || strings.Contains(d.Result, protectedMark) || strings.Contains(d.Result, "id_ed25519") || strings.Contains(d.Result, ".env") ||
			strings.Contains(d.Result, "credentials") || strings.Contains(d.Result, "server.pem") {
			t.Errorf("search_files %v shows a credential store: %+v", args, d)
		}
	}
	if d := h.run(t, "search_files", map[string]any{"content": "hello"}); !d.OK || !strings.Contains(d.Result, "notes.txt") {
		t.Errorf("search of the home: %+v", d)
	}
}

// TestToolResultRedactedBeforeTheAuditLog: with the redactor of the
// service in the same process, a secret in a tool's result is removed
// before the audit log records it, and the decision says it was (the
// card shows it; the service gets the same redacted text).
func TestToolResultRedactedBeforeTheAuditLog(t *testing.T) {
	const secret = "oc-SECRET-5e1d9b7f3a2c"
	ws, data := t.TempDir(), t.TempDir()
	mkfileApp(t, filepath.Join(ws, "notes.txt"), "the key is "+secret+"\n")
	r, err := NewToolRunner(ToolRunnerOptions{Workspace: ws, AuditPath: filepath.Join(data, "audit.db"), Headless: true,
		Redact: func(s string) (string, bool) {
			out := strings.ReplaceAll(s, secret, "[redacted]")
			return out, out != s
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := r.Run(context.Background(), "s1", api.ToolCall{ID: "c1", Name: "read_file", Arguments: json.RawMessage(`{"path":"notes.txt"}`)})
	if !d.OK || !d.Redacted || strings.Contains(d.Result, secret) || !strings.Contains(d.Result, "[redacted]") {
		t.Fatalf("decision %+v", d)
	}
	d = r.Run(context.Background(), "s1", api.ToolCall{ID: "c2", Name: "read_file", Arguments: json.RawMessage(`{"path":"other.txt"}`)})
	if d.Redacted {
		t.Fatalf("a result with no secret marked redacted: %+v", d)
	}
	r.Close()
	for _, f := range []string{"audit.db", "audit.db-wal"} {
		if b, _ := os.ReadFile(filepath.Join(data, f)); strings.Contains(string(b), secret) {
			t.Errorf("%s holds the secret", f)
		}
	}
}
