// Package approved keeps what the user approved of a configuration file that
// can start programs or send secrets (the service's config.json, the
// desktop's mcp.json): per name, the approved content itself. A file whose
// bytes differ from the approved content is a change Jarvis did not make
// through its own UI (an editor, a sync tool, an agent's write_file); it is
// not applied until the user approves it, and meanwhile the last approved
// content (Last) can keep running.
//
// The store is a folder in the data dir (<data-dir>/approved, mode 0700),
// which the file tools cannot reach, so an agent cannot approve its own
// write. Each name is one file written atomically (a temp file renamed
// over it), so the window, the service and a `jarvis ... approve` command in
// a terminal can share it without a lock: the last approval wins whole.
package approved

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"jarvis/internal/fsperm"
)

// Store is the approved contents kept under one folder.
type Store struct {
	dir string
}

// Dir is the store's folder inside dataDir.
func Dir(dataDir string) string { return filepath.Join(dataDir, "approved") }

// Open returns the store of dataDir, creating <dataDir>/approved (0700).
func Open(dataDir string) (*Store, error) {
	dir := Dir(dataDir)
	if err := fsperm.Dir(dir); err != nil {
		return nil, err
	}
	return &Store{dir: dir}, nil
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Hash is the hex SHA-256 of content: what a prompt shows and what an
// approval carries, so the user approves the very bytes they were shown.
func Hash(content []byte) string {
	h := sha256.Sum256(content)
	return hex.EncodeToString(h[:])
}

func (s *Store) path(name string) (string, error) {
	if !nameRE.MatchString(name) {
		return "", fmt.Errorf("approved: bad name %q", name)
	}
	return filepath.Join(s.dir, name), nil
}

// Last is the content last approved under name; ok is false when nothing
// was ever approved.
func (s *Store) Last(name string) (content []byte, ok bool, err error) {
	p, err := s.path(name)
	if err != nil {
		return nil, false, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// Check reports whether content is what was last approved under name.
func (s *Store) Check(name string, content []byte) (bool, error) {
	last, ok, err := s.Last(name)
	if err != nil || !ok {
		return false, err
	}
	return bytes.Equal(last, content), nil
}

// Approve records content as the approved content of name (atomically,
// durably). Jarvis calls it when its own UI writes the file, and when the
// user approves a change shown to them.
func (s *Store) Approve(name string, content []byte) error {
	p, err := s.path(name)
	if err != nil {
		return err
	}
	if err := fsperm.WriteFile(p, content); err != nil {
		return fmt.Errorf("approved: %w", err)
	}
	return fsperm.SyncDir(s.dir)
}

// ApproveHash approves content only when its Hash is hash: the approval
// of what a prompt showed, refused when the file changed in between.
func (s *Store) ApproveHash(name string, content []byte, hash string) error {
	if got := Hash(content); got != hash {
		return ErrChanged
	}
	return s.Approve(name, content)
}

// ErrChanged is ApproveHash's error when the content is no longer the one
// shown to the user.
var ErrChanged = errors.New("the file changed after it was shown; look at it again before approving")

// Summarize says in plain lines what a JSON configuration would start and
// where it would connect, for the prompt or the terminal that asks for
// approval: every "command" with its "args", every program-backed provider
// ("provider": "claude", "codex", "pi", "acp"), every http(s)/ws(s) URL, and
// every secret reference it would send ("${keyring:…}", "secret:…",
// "apiKeyRef"). Content that is not JSON is summarised as such.
func Summarize(content []byte) []string {
	var v any
	if err := json.Unmarshal(content, &v); err != nil {
		return []string{"the file is not valid JSON: " + err.Error()}
	}
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if cmd, ok := x["command"].(string); ok && cmd != "" {
				line := cmd
				if args, ok := x["args"].([]any); ok {
					for _, a := range args {
						if s, ok := a.(string); ok {
							line += " " + s
						}
					}
				}
				add(fmt.Sprintf("starts the program: %s (%s)", line, where))
			}
			if p, ok := x["provider"].(string); ok {
				switch p {
				case "claude", "codex", "pi", "claude-cli", "codex-cli", "pi-cli":
					add(fmt.Sprintf("starts the %s program (%s)", strings.TrimSuffix(p, "-cli"), where))
				}
			}
			if sb, ok := x["sandbox"].(bool); ok && !sb {
				add(fmt.Sprintf("runs WITHOUT the sandbox: it can read, change and delete any of your files, use the network and reach your other programs, as you can (%s)", where))
			}
			if r, ok := x["apiKeyRef"].(string); ok && r != "" {
				add(fmt.Sprintf("sends the stored secret %q (%s)", r, where))
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				w := k
				if where != "" {
					w = where + "." + k
				}
				walk(w, x[k])
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", where, i), e)
			}
		case string:
			l := strings.ToLower(x)
			for _, s := range []string{"http://", "https://", "ws://", "wss://"} {
				if strings.HasPrefix(l, s) {
					add(fmt.Sprintf("connects to %s (%s)", x, where))
				}
			}
			if strings.Contains(x, "${keyring:") || strings.HasPrefix(x, "secret:") {
				add(fmt.Sprintf("sends the stored secret %s (%s)", x, where))
			}
		}
	}
	walk("", v)
	if len(out) == 0 {
		out = append(out, "starts no program and connects nowhere")
	}
	return out
}
