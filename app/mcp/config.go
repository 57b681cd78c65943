package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"jarvis/service/secrets"
)

// ServerConfig is one entry of mcpServers, in Claude Desktop's shape:
// command, args, env for a stdio server; url, headers for a Streamable HTTP
// server. Values of env and headers may be keyring references,
// "${keyring:NAME}", resolved when the server starts from the secrets
// stored for that server alone (SecretRef), so a secret never has to sit
// in the file and the file reaches no other secret.
type ServerConfig struct {
	// Name is the server's name in tool names (mcp__<name>__<tool>): the
	// name as written, mapped to letters, digits, '-' and '_' (validName).
	Name string `json:"-"`
	// Label is the name as written in the file ("github.com"), shown to
	// the user.
	Label string `json:"-"`
	// Problem: the entry cannot run as written (shown on the server, which
	// stays stopped; the file's other entries run).
	Problem string `json:"-"`
	// Warnings are keys Jarvis ignores (autoApprove, ...).
	Warnings []string `json:"-"`

	Command  string            `json:"command,omitempty"`
	Args     []string          `json:"args,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Cwd      string            `json:"cwd,omitempty"`
	URL      string            `json:"url,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Type     string            `json:"type,omitempty"`     // "stdio", "http" or "streamable-http", "sse" (legacy HTTP+SSE); inferred when empty
	Disabled bool              `json:"disabled,omitempty"` // the server's switch
	// Timeout is a call's limit in seconds (default 60).
	Timeout float64 `json:"timeout,omitempty"`
	// Sandbox false asks to run a stdio server outside the sandbox
	// (Options.Confine), which its approval confirms (approval.go); by
	// default it runs inside. Network lets a sandboxed server reach the
	// network.
	Sandbox *bool `json:"sandbox,omitempty"`
	Network bool  `json:"network,omitempty"`
	// OAuth tunes the sign-in of a url server that asks for one (oauth.go).
	OAuth *OAuthConfig `json:"oauth,omitempty"`
	line  int
}

// Unsandboxed reports an entry that asks to run outside the sandbox.
func (sc ServerConfig) Unsandboxed() bool { return sc.Sandbox != nil && !*sc.Sandbox }

// transport is the entry's transport, as approved and shown: stdio,
// http (Streamable HTTP) or sse (the legacy HTTP+SSE transport).
func (c ServerConfig) transport() string {
	switch {
	case c.IsSSE():
		return "sse"
	case c.IsHTTP():
		return "http"
	}
	return "stdio"
}

// IsSSE reports whether the server speaks the legacy HTTP+SSE transport
// (spec 2024-11-05), which older remote servers still use.
func (c ServerConfig) IsSSE() bool { return c.URL != "" && c.Type == "sse" }

// IsHTTP reports whether the server is reached over Streamable HTTP.
func (c ServerConfig) IsHTTP() bool { return c.URL != "" }

// CallTimeout is the server's per-call limit.
func (c ServerConfig) CallTimeout() time.Duration {
	if c.Timeout <= 0 {
		return 60 * time.Second
	}
	return time.Duration(c.Timeout * float64(time.Second))
}

// Config is a parsed mcp.json.
type Config struct {
	Servers []ServerConfig // sorted by name
}

// serverName is what a name must look like: it becomes part of the tool
// names models see (mcp__<server>__<tool>), which allow only these
// characters, and "__" would make the name ambiguous.
var serverName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// validName maps a name as written to one that fits serverName: other
// characters become '_', runs of '_' one, at most 32 characters.
func validName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	out := b.String()
	for strings.Contains(out, "__") {
		out = strings.ReplaceAll(out, "__", "_")
	}
	if len(out) > 32 {
		out = out[:32]
	}
	if out == "" || out == "_" {
		out = "server"
	}
	return out
}

// LoadConfig reads path. A missing file is an empty configuration; any
// other problem is an error naming the file and line.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Config{}, nil
	}
	if err != nil {
		return Config{}, err
	}
	return ParseConfig(path, b)
}

// serverKeys are the objects of servers by name Jarvis reads: Claude
// Desktop's, Cursor's and Goose's "mcpServers", VS Code's "servers".
var serverKeys = map[string]bool{"mcpServers": true, "servers": true}

// ParseConfig parses the JSON of an mcp.json (or of a Claude Desktop,
// Cursor or VS Code config: only mcpServers or servers is read, other keys
// are ignored). Only a file that is not such JSON is an error, which reads
// "<name>:<line>: ..."; an entry that cannot run is kept with its Problem
// (the others run), keys Jarvis does not know are Warnings.
func ParseConfig(name string, b []byte) (Config, error) {
	fail := func(off int64, format string, a ...any) (Config, error) {
		return Config{}, fmt.Errorf("%s:%d: %s", name, lineAt(b, off), fmt.Sprintf(format, a...))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return Config{}, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	tok, err := d.Token()
	if err != nil {
		return fail(syntaxOffset(err, d), "not JSON: %v", err)
	}
	if tok != json.Delim('{') {
		return fail(0, "the file must hold a JSON object with an \"mcpServers\" object")
	}
	var cfg Config
	seen := false
	names := map[string]bool{}
	for d.More() {
		kt, err := d.Token()
		if err != nil {
			return fail(syntaxOffset(err, d), "not JSON: %v", err)
		}
		key, _ := kt.(string)
		if !serverKeys[key] {
			var skip json.RawMessage
			if err := d.Decode(&skip); err != nil {
				return fail(syntaxOffset(err, d), "not JSON: %v", err)
			}
			continue
		}
		seen = true
		start := d.InputOffset()
		t, err := d.Token()
		if err != nil {
			return fail(syntaxOffset(err, d), "not JSON: %v", err)
		}
		if t != json.Delim('{') {
			return fail(start, "%q must be an object of servers by name", key)
		}
		for d.More() {
			nt, err := d.Token()
			if err != nil {
				return fail(syntaxOffset(err, d), "not JSON: %v", err)
			}
			at := d.InputOffset()
			label, _ := nt.(string)
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				return fail(syntaxOffset(err, d), "not JSON: %v", err)
			}
			sc, problem := parseServer(raw)
			sc.Label, sc.Name, sc.line = label, label, lineAt(b, at)
			if !serverName.MatchString(label) || strings.Contains(label, "__") {
				sc.Name = validName(label)
			}
			switch {
			case names[sc.Name] && sc.Name == label:
				problem = fmt.Sprintf("server %q is listed twice", label)
			case names[sc.Name]:
				problem = fmt.Sprintf("server %q: its name, as tool names allow it (%q), is another server's", label, sc.Name)
			}
			if problem != "" {
				sc.Problem = fmt.Sprintf("%s:%d: server %q: %s", name, sc.line, label, problem)
				for i := 2; names[sc.Name]; i++ {
					sc.Name = fmt.Sprintf("%s-%d", validName(label), i)
				}
			}
			for i, w := range sc.Warnings {
				sc.Warnings[i] = fmt.Sprintf("%s:%d: server %q: %s", name, sc.line, label, w)
			}
			names[sc.Name] = true
			cfg.Servers = append(cfg.Servers, sc)
		}
		if _, err := d.Token(); err != nil {
			return fail(syntaxOffset(err, d), "not JSON: %v", err)
		}
	}
	if _, err := d.Token(); err != nil {
		return fail(syntaxOffset(err, d), "not JSON: %v", err)
	}
	if _, err := d.Token(); err != io.EOF {
		return fail(d.InputOffset(), "unexpected text after the JSON object")
	}
	if !seen {
		return fail(0, "no \"mcpServers\" object")
	}
	sort.Slice(cfg.Servers, func(i, j int) bool { return cfg.Servers[i].Name < cfg.Servers[j].Name })
	return cfg, nil
}

// knownKeys are the keys of an entry Jarvis reads.
var knownKeys = map[string]bool{"command": true, "args": true, "env": true, "cwd": true, "url": true, "headers": true,
	"type": true, "disabled": true, "timeout": true, "oauth": true}

// parseServer decodes one server and checks it; problem is what keeps it
// from running, in plain words ("" when fine). Keys Jarvis does not read
// (autoApprove, alwaysAllow, ...) are warnings: the entry runs without them.
func parseServer(raw json.RawMessage) (sc ServerConfig, problem string) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return sc, "an entry must be an object (command, args, env or url, headers)"
	}
	var unknown []string
	for k := range keys {
		if !knownKeys[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		sc.Warnings = append(sc.Warnings, fmt.Sprintf("%q is not a setting Jarvis knows; ignored", k))
	}
	if err := json.Unmarshal(raw, &sc); err != nil {
		return sc, strings.TrimPrefix(err.Error(), "json: ")
	}
	switch sc.Type {
	case "", "stdio", "http", "streamable-http", "streamableHttp", "sse":
	default:
		return sc, fmt.Sprintf("unknown type %q (stdio, http or sse)", sc.Type)
	}
	switch {
	case sc.Command != "" && sc.URL != "":
		return sc, "give either command (stdio) or url (Streamable HTTP), not both"
	case sc.Command == "" && sc.URL == "":
		return sc, "give command (a stdio server) or url (a Streamable HTTP server)"
	case sc.URL != "" && !strings.HasPrefix(sc.URL, "http://") && !strings.HasPrefix(sc.URL, "https://"):
		return sc, fmt.Sprintf("url %q must start with http:// or https://", sc.URL)
	case sc.URL == "" && len(sc.Headers) > 0:
		return sc, "headers apply only to a url server"
	case sc.Type == "sse" && sc.URL == "":
		return sc, "an sse server needs a url"
	case sc.Timeout < 0:
		return sc, "timeout must be a positive number of seconds"
	case sc.OAuth != nil && sc.URL == "":
		return sc, "oauth applies only to a url server"
	case sc.OAuth != nil && (sc.OAuth.RedirectPort < 0 || sc.OAuth.RedirectPort > 65535):
		return sc, "oauth.redirectPort must be a port number (1-65535), or 0 for any free port"
	case sc.URL != "" && (sc.Sandbox != nil || sc.Network):
		return sc, "sandbox and network apply only to a server Jarvis starts (command)"
	}
	return sc, ""
}

func syntaxOffset(err error, d *json.Decoder) int64 {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Offset
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Offset
	}
	return d.InputOffset()
}

// lineAt is the 1-based line of byte offset off.
func lineAt(b []byte, off int64) int {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	if off < 0 {
		off = 0
	}
	return 1 + bytes.Count(b[:off], []byte("\n"))
}

// keyringRef matches a value that names a keyring secret.
var keyringRef = regexp.MustCompile(`^\$\{keyring:([A-Za-z0-9_.-]+)\}$`)

// secretName is what the NAME of a server's secret may be.
var secretName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// resolve replaces the keyring references of server's vals through lookup,
// each in the server's own namespace (SecretRef).
func resolve(server string, vals map[string]string, lookup func(ref string) (string, error)) (map[string]string, error) {
	out := make(map[string]string, len(vals))
	for k, v := range vals {
		if m := keyringRef.FindStringSubmatch(v); m != nil {
			if lookup == nil {
				return nil, fmt.Errorf("%s: secret %q: this Jarvis has no secret store", k, m[1])
			}
			s, err := lookup(SecretRef(server, m[1]))
			if errors.Is(err, secrets.ErrNotFound) {
				return nil, fmt.Errorf("%s: no secret %q is stored for MCP server %q; store it in the MCP panel or with: jarvis mcp secret set %s %s",
					k, m[1], server, server, m[1])
			}
			if err != nil {
				return nil, fmt.Errorf("%s: secret %q: %w", k, m[1], err)
			}
			v = s
		}
		out[k] = v
	}
	return out, nil
}

// SecretRef is the secret store's name of a server's secret NAME: what
// "${keyring:NAME}" in that server's entry resolves, and what the MCP panel
// and `jarvis mcp secret set SERVER NAME` write. The namespace keeps every
// other secret (provider keys, agent secrets, the audit key) out of reach
// of mcp.json.
func SecretRef(server, name string) string { return "mcp/" + server + "/" + name }
