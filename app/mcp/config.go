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
)

// ServerConfig is one entry of mcpServers, in Claude Desktop's shape:
// command, args, env for a stdio server; url, headers for a Streamable HTTP
// server. Values of env and headers may be keyring references,
// "${keyring:REF}", resolved when the server starts, so a secret never has
// to sit in the file.
type ServerConfig struct {
	Name     string            `json:"-"`
	Command  string            `json:"command,omitempty"`
	Args     []string          `json:"args,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Cwd      string            `json:"cwd,omitempty"`
	URL      string            `json:"url,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Type     string            `json:"type,omitempty"`     // "stdio", "http" or "streamable-http"; inferred when empty
	Disabled bool              `json:"disabled,omitempty"` // the server's switch
	// Timeout is a call's limit in seconds (default 60).
	Timeout float64 `json:"timeout,omitempty"`
	// Sandbox false asks to run a stdio server outside the sandbox
	// (Options.Confine); by default it runs inside. Network lets a
	// sandboxed server reach the network.
	Sandbox *bool `json:"sandbox,omitempty"`
	Network bool  `json:"network,omitempty"`
	line    int
}

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

// ParseConfig parses the JSON of an mcp.json (or of a Claude Desktop or
// Cursor config: only mcpServers is read, other keys are ignored). Errors
// read "<name>:<line>: ...".
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
	for d.More() {
		kt, err := d.Token()
		if err != nil {
			return fail(syntaxOffset(err, d), "not JSON: %v", err)
		}
		key, _ := kt.(string)
		if key != "mcpServers" {
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
			return fail(start, "\"mcpServers\" must be an object of servers by name")
		}
		names := map[string]bool{}
		for d.More() {
			nt, err := d.Token()
			if err != nil {
				return fail(syntaxOffset(err, d), "not JSON: %v", err)
			}
			at := d.InputOffset()
			sname, _ := nt.(string)
			var raw json.RawMessage
			if err := d.Decode(&raw); err != nil {
				return fail(syntaxOffset(err, d), "not JSON: %v", err)
			}
			if !serverName.MatchString(sname) || strings.Contains(sname, "__") {
				return fail(at, "server name %q: use 1-32 letters, digits, '-' or '_' (no \"__\"): it becomes part of the tool names", sname)
			}
			if names[sname] {
				return fail(at, "server %q is listed twice", sname)
			}
			names[sname] = true
			sc, msg := parseServer(raw)
			if msg != "" {
				return fail(at, "server %q: %s", sname, msg)
			}
			sc.Name, sc.line = sname, lineAt(b, at)
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

// parseServer decodes one server strictly and checks it; msg is the
// plain-word problem, "" when fine.
func parseServer(raw json.RawMessage) (ServerConfig, string) {
	var sc ServerConfig
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&sc); err != nil {
		return sc, strings.TrimPrefix(err.Error(), "json: ")
	}
	switch sc.Type {
	case "", "stdio", "http", "streamable-http", "streamableHttp":
	case "sse":
		return sc, "the legacy SSE transport is not supported; use the server's Streamable HTTP endpoint"
	default:
		return sc, fmt.Sprintf("unknown type %q (stdio or http)", sc.Type)
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
	case sc.Timeout < 0:
		return sc, "timeout must be a positive number of seconds"
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

// resolve replaces keyring references in vals through lookup.
func resolve(vals map[string]string, lookup func(ref string) (string, error)) (map[string]string, error) {
	out := make(map[string]string, len(vals))
	for k, v := range vals {
		if m := keyringRef.FindStringSubmatch(v); m != nil {
			if lookup == nil {
				return nil, fmt.Errorf("%s: keyring reference %q, and no keyring is available", k, m[1])
			}
			s, err := lookup(m[1])
			if err != nil {
				return nil, fmt.Errorf("%s: keyring reference %q: %w", k, m[1], err)
			}
			v = s
		}
		out[k] = v
	}
	return out, nil
}
