package turn

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"sync"

	"jarvis/service/config"
)

// Settings holds one agent type's settings (an agent's "external" or
// "proxy" object), decoded and validated once per distinct bytes: when a
// configuration is loaded or reloaded (the service has every agent of the new one
// parsed), and for an agent of an older configuration a running turn still
// holds. Safe for concurrent use.
type Settings[T any] struct {
	Raw   func(config.Agent) json.RawMessage // the agent's settings object
	Parse func(config.Agent) (T, error)      // decodes and validates it
	m     sync.Map                           // agent id → *settingsEntry[T]
}

type settingsEntry[T any] struct {
	raw json.RawMessage
	v   T
	err error
}

// Get returns the agent's settings, parsing them only when their bytes
// are not the ones parsed last.
func (p *Settings[T]) Get(a config.Agent) (T, error) {
	raw := p.Raw(a)
	if v, ok := p.m.Load(a.AgentID); ok {
		if e := v.(*settingsEntry[T]); bytes.Equal(e.raw, raw) {
			return e.v, e.err
		}
	}
	v, err := p.Parse(a)
	p.m.Store(a.AgentID, &settingsEntry[T]{raw: raw, v: v, err: err})
	return v, err
}

// NewID is a new random id with prefix ("t_", "pc_", ...): 96 random bits
// in 16 URL-safe characters (base64url). A conversation's and a turn's ids
// are written several times a message (the rows and their indexes), so
// their length is part of the database's size; ids made by older builds
// are 24 hex characters and stay valid (an id is opaque).
func NewID(prefix string) string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}
