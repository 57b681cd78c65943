package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"jarvis/service/netguard"
)

// Limits and defaults of a Definition.
const (
	DefaultTimeout     = 60 * time.Second
	MaxTimeoutSeconds  = 24 * 60 * 60
	DefaultMaxResponse = 1 << 20 // 1 MiB
)

// Definition is a proxy agent's configuration: the "proxy" object of an
// agent definition in the config file (docs/guide/configuration.md), or what the desktop's
// proxy-agent editor saves. It is a plain value: the Client compiles what it
// needs on every call, so a Definition can be edited and re-tested freely.
//
//	{
//	  "profile": {"name": "Billing bot", "externalPlatform": "Acme"},
//	  "method": "POST",
//	  "url": "https://agents.example.com/billing",
//	  "headers": {"Authorization": "Bearer {{secret:acme-billing}}"},
//	  "metadata": {"tenant": "t-42"},
//	  "stream": {"enable": true, "streamMode": "messages"},
//	  "async": false,
//	  "timeoutSeconds": 30,
//	  "routeToUser": true
//	}
//
// Without "body" the request is the Agent Protocol request of docs/protocols/proxy-agents.md
// (AgentRequest). With "body" it is a template (see Body); with
// "responseMapping" a non-conforming answer can be read without an adapter.
type Definition struct {
	Profile Profile `json:"profile"`

	// Method is GET, POST, PUT, PATCH or DELETE; empty means POST. A GET
	// carries no body.
	Method string `json:"method,omitempty"`
	// URL is the agent's absolute http(s) endpoint. It takes no placeholders.
	URL string `json:"url"`
	// Headers are sent as given, except that every {{secret:name}} in a
	// value is replaced with the keyring secret "name" (Options.Secrets) at
	// call time; secrets are never stored in the definition. Content-Type
	// defaults to application/json.
	Headers map[string]string `json:"headers,omitempty"`
	// Body, when set, is the request-body template. It is either a JSON
	// value whose strings contain placeholders,
	//	{"query": "{{input}}", "conversation": "{{sessionId}}", "n": "{{metadata.count}}"}
	// or a JSON string holding template text, for placeholders that stand
	// outside quotes. Placeholders: {{input}}, {{sessionId}}, {{userId}},
	// {{callbackUrl}}, {{debug}}, {{stream}}, {{metadata}} and
	// {{metadata.key}} (a path, as in responseMapping). Values are escaped
	// correctly for where they stand; see compileTemplate's rules.
	Body json.RawMessage `json:"body,omitempty"`
	// Metadata is sent with every request (AgentRequest.Metadata); per-call
	// Input.Metadata overrides keys of the same name.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Debug asks the agent for its thoughts (docs/protocols/proxy-agents.md's "debug" field).
	Debug *DebugOptions `json:"debug,omitempty"`
	// Stream asks the agent to stream its answer (docs/protocols/proxy-agents.md's "stream").
	Stream *StreamOptions `json:"stream,omitempty"`

	// ResponseMapping says where a non-conforming agent puts its answer.
	// Empty fields use the Agent Protocol locations.
	ResponseMapping Mapping `json:"responseMapping,omitempty"`

	// Async: the call is only acknowledged (any 2xx) and the agent POSTs
	// Agent Protocol responses to the callback URL later (ParseCallback).
	Async bool `json:"async,omitempty"`
	// TimeoutSeconds bounds the whole wait: connecting, the answer, the
	// whole stream, and for async agents the callbacks (enforced by the
	// caller through Timeout). 0 means DefaultTimeout.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
	// RouteToUser shows the agent's answer to the user as is, bypassing the
	// supervisor. The Client does not act on it; the session runtime does.
	RouteToUser bool `json:"routeToUser,omitempty"`
	// MaxResponseBytes caps the answer (a stream in total); 0 means the
	// Client's default (Options.MaxResponse, itself 1 MiB by default).
	MaxResponseBytes int64 `json:"maxResponseBytes,omitempty"`
}

// Profile is how the agent is presented (docs/protocols/proxy-agents.md, "Agent Profile").
type Profile struct {
	Name             string `json:"name"`
	Description      string `json:"description,omitempty"`
	ExternalPlatform string `json:"externalPlatform,omitempty"`
	Avatar           string `json:"avatar,omitempty"`
}

// DebugOptions mirror the request's "debug" object.
type DebugOptions struct {
	Enable    bool   `json:"enable"`
	DebugMode string `json:"debugMode,omitempty"` // full | no | thoughts
}

// StreamOptions mirror the request's "stream" object.
type StreamOptions struct {
	Enable     bool   `json:"enable"`
	StreamMode string `json:"streamMode,omitempty"` // messages (token is not supported, as in the seed)
}

// Mapping holds response-mapping paths such as "data.reply.text" or
// "choices[0].message.content" (syntax: keys joined by dots, "[n]" to index
// an array, "[-1]" for its last element, "[*]" for all of them). An empty
// field uses the Agent Protocol location given in brackets.
//
// The value found for Output, Thoughts or FinalOutput may be a string, an
// {type, content} (or {text}) object, or an array of either; arrays are
// flattened and, for Output, only text items count (others go to
// Response.Parts).
type Mapping struct {
	MessageID         string `json:"messageId,omitempty"`         // [messageId]
	Output            string `json:"output,omitempty"`            // [output]
	Thoughts          string `json:"thoughts,omitempty"`          // [debug]
	Status            string `json:"status,omitempty"`            // [sessionInfo.status]
	ConversationState string `json:"conversationState,omitempty"` // [sessionInfo.conversationState]
	FinalOutput       string `json:"finalOutput,omitempty"`       // [sessionInfo.output]
}

// Input is one user turn to forward.
type Input struct {
	SessionID string
	UserID    string
	Text      string
	// Metadata is merged over Definition.Metadata.
	Metadata map[string]any
	// Debug asks for thoughts on this call even if the definition does not.
	Debug bool
	// CallbackURL is where an async agent must POST its answers (with the
	// per-session token already in it). It is sent as the request's
	// "callbackUrl" field and is available to templates as {{callbackUrl}}.
	CallbackURL string
}

// MethodOrDefault returns the HTTP method to use.
func (d Definition) MethodOrDefault() string {
	if d.Method == "" {
		return "POST"
	}
	return strings.ToUpper(d.Method)
}

// Timeout is the bound on the whole wait for an answer.
func (d Definition) Timeout() time.Duration {
	if d.TimeoutSeconds <= 0 {
		return DefaultTimeout
	}
	return time.Duration(d.TimeoutSeconds) * time.Second
}

// Validate reports every problem with the definition at once, each a
// *ValidationError naming its JSON field; the result matches ErrInvalid.
func (d Definition) Validate() error {
	_, err := d.compile()
	return err
}

// compiled is what a call needs from a Definition, derived once per call.
type compiled struct {
	method  string
	url     string
	body    *bodyTemplate // nil: the Agent Protocol request
	mapping compiledMapping
}

func (d Definition) compile() (*compiled, error) {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	c := &compiled{method: d.MethodOrDefault(), url: d.URL}

	switch c.method {
	case "GET", "POST", "PUT", "PATCH", "DELETE":
	default:
		bad("method", "%q is not one of GET, POST, PUT, PATCH, DELETE", d.Method)
	}
	if d.URL == "" {
		bad("url", "is required")
	} else if u, err := url.Parse(d.URL); err != nil {
		bad("url", "cannot be parsed: %v", err)
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad("url", "%q must be an absolute http:// or https:// URL", d.URL)
	} else if err := netguard.CheckHost(u.Hostname()); err != nil {
		bad("url", "%v", err)
	} else if strings.Contains(d.URL, "{{") {
		bad("url", "takes no placeholders; put per-call values in the body")
	}
	for _, name := range slices.Sorted(maps.Keys(d.Headers)) {
		value, field := d.Headers[name], "headers."+name
		if !validHeaderName(name) {
			bad(field, "is not a valid header name")
		}
		switch strings.ToLower(name) {
		case "host", "content-length", "transfer-encoding", "connection":
			bad(field, "is set by the client and cannot be configured")
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			bad(field, "value contains a line break or NUL")
		}
		if err := checkSecretRefs(value); err != nil {
			bad(field, "%v", err)
		}
	}
	if len(bytes.TrimSpace(d.Body)) > 0 && !bytes.Equal(bytes.TrimSpace(d.Body), []byte("null")) {
		if c.method == "GET" {
			bad("body", "a GET request carries no body; use POST or remove the body")
		} else if src, err := templateSource(d.Body); err != nil {
			bad("body", "%v", err)
		} else if t, err := compileTemplate(src); err != nil {
			bad("body", "%v", err)
		} else {
			c.body = t
		}
	}
	if d.Debug != nil {
		switch d.Debug.DebugMode {
		case "", "full", "no", "thoughts":
		default:
			bad("debug.debugMode", "%q is not one of full, no, thoughts", d.Debug.DebugMode)
		}
	}
	if d.Stream != nil {
		switch d.Stream.StreamMode {
		case "", "messages":
		case "token":
			bad("stream.streamMode", `"token" is not supported; only "messages" is (as in docs/protocols/proxy-agents.md)`)
		default:
			bad("stream.streamMode", "%q is not supported; use \"messages\"", d.Stream.StreamMode)
		}
	}
	if d.TimeoutSeconds < 0 || d.TimeoutSeconds > MaxTimeoutSeconds {
		bad("timeoutSeconds", "%d is outside 0..%d (0 means %d)", d.TimeoutSeconds, MaxTimeoutSeconds, int(DefaultTimeout/time.Second))
	}
	if d.MaxResponseBytes < 0 {
		bad("maxResponseBytes", "must not be negative (0 means the default)")
	}
	m, merrs := d.ResponseMapping.compile()
	errs = append(errs, merrs...)
	c.mapping = m
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

// templateSource returns the template text of a body: the content of a JSON
// string, or the JSON text itself.
func templateSource(body json.RawMessage) (string, error) {
	b := bytes.TrimSpace(body)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", fmt.Errorf("is not a valid JSON string: %v", err)
		}
		return s, nil
	}
	if !json.Valid(b) {
		return "", errors.New("is not valid JSON (give the template as a JSON string to place placeholders outside quotes)")
	}
	return string(b), nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// checkSecretRefs checks that every {{...}} in a header value is a
// well-formed {{secret:name}}.
func checkSecretRefs(v string) error {
	_, err := expandSecrets(v, func(string) (string, error) { return "", nil })
	return err
}

// expandSecrets replaces each {{secret:name}} in v with resolve(name).
// Errors name the reference, never a value.
func expandSecrets(v string, resolve func(string) (string, error)) (string, error) {
	if !strings.Contains(v, "{{") {
		return v, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(v, "{{")
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		j := strings.Index(v[i:], "}}")
		if j < 0 {
			return "", errors.New("unclosed {{")
		}
		inner := strings.TrimSpace(v[i+2 : i+j])
		name, ok := strings.CutPrefix(inner, "secret:")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return "", fmt.Errorf("{{%s}}: header values accept only {{secret:name}}", inner)
		}
		s, err := resolve(name)
		if err != nil {
			return "", fmt.Errorf("%w: {{secret:%s}}: %v", ErrSecret, name, err)
		}
		if strings.ContainsAny(s, "\r\n\x00") {
			return "", fmt.Errorf("%w: {{secret:%s}} contains a line break or NUL", ErrSecret, name)
		}
		b.WriteString(v[:i])
		b.WriteString(s)
		v = v[i+j+2:]
	}
}
