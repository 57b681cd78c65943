package tools

import (
	"bytes"
	"encoding/json"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzCanonicalArguments checks the argument decoder and canonical paths on
// any input: an accepted call has exactly the schema's argument names, each
// once; its canonical form is accepted again and is its own canonical form
// (so rules see one spelling and the executor runs the call judged); every
// canonical path is clean, relative, without "..", and inside the workspace.
func FuzzCanonicalArguments(f *testing.F) {
	seeds := []struct{ tool, args string }{
		{"read_file", `{"path":"config/.env"}`},
		{"read_file", `{"PATH":"config/.env"}`},
		{"read_file", `{"path":"./config//.env/"}`},
		{"read_file", `{"path":"link/.env"}`},
		{"read_file", `{"path":"a","path":"b"}`},
		{"read_file", `{"pa\u0074h":"x/../config/.env"}`},
		{"list_dir", `{}`},
		{"list_dir", `{"path":"/"}`},
		{"write_file", `{"path":"notes/a.md","content":"x"}`},
		{"run_command", `{"program":"git","argſ":["push"]}`},
		{"run_command", `{"program":"git","args":["status"],"cwd":"./link"}`},
		{"open_url", `{"url":"HTTPS://Example.COM/a?b#c"}`},
		{"notify", `{"title":"t","body":""}`},
		{"open_app", `{"app_id":"firefox"}`},
		{"clipboard_write", `{"text":"x\u0000"}`},
	}
	for _, s := range seeds {
		f.Add(s.tool, s.args)
	}
	ws := f.TempDir()
	if err := os.MkdirAll(filepath.Join(ws, "config"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("config", filepath.Join(ws, "link")); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(ws, "out")); err != nil {
		f.Fatal(err)
	}
	x, err := NewExecutor(Options{Workspace: ws, NoBubblewrap: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { x.Close() })
	f.Fuzz(func(t *testing.T, tool, args string) {
		def, ok := Lookup(tool)
		if !ok {
			return
		}
		a := x.Assess(tool, json.RawMessage(args))
		if a.Canonical == nil {
			if a.Risk != Forbidden {
				t.Fatalf("accepted %s %s without a canonical form", tool, args)
			}
			return
		}
		var props struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		json.Unmarshal(def.Parameters, &props)
		// The accepted input's names are the schema's, exactly, once each.
		dec := json.NewDecoder(strings.NewReader(args))
		if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
			seen := map[string]bool{}
			for dec.More() {
				k, _ := dec.Token()
				name := k.(string)
				if _, ok := props.Properties[name]; !ok || seen[name] {
					t.Fatalf("accepted argument %q of %s %s", name, tool, args)
				}
				seen[name] = true
				var skip json.RawMessage
				dec.Decode(&skip)
			}
		}
		var canon map[string]json.RawMessage
		if err := json.Unmarshal(a.Canonical, &canon); err != nil {
			t.Fatalf("canonical %s: %v", a.Canonical, err)
		}
		for name := range canon {
			if _, ok := props.Properties[name]; !ok {
				t.Fatalf("canonical %s has %q", a.Canonical, name)
			}
		}
		for _, key := range []string{"path", "cwd"} {
			raw, ok := canon[key]
			if !ok {
				continue
			}
			var p string
			json.Unmarshal(raw, &p)
			if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") {
				t.Fatalf("canonical %s path %q is not clean and relative", a.Canonical, p)
			}
			real, err := filepath.EvalSymlinks(filepath.Join(x.Workspace(), filepath.FromSlash(p)))
			if err == nil {
				if _, ok := within(x.Workspace(), real); !ok {
					t.Fatalf("canonical %s resolves outside: %s", a.Canonical, real)
				}
			}
		}
		b := x.Assess(tool, a.Canonical)
		if !bytes.Equal(b.Canonical, a.Canonical) || b.Risk != a.Risk {
			t.Fatalf("canonical form is not stable: %s %s → %s (%s) → %s (%s)", tool, args, a.Canonical, a.Risk, b.Canonical, b.Risk)
		}
	})
}
