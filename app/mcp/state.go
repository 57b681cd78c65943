package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"

	"jarvis/internal/fsperm"
)

// persisted is the state file: each tool's pinned definition hash and the
// tools the user switched off, by "<server>/<tool>".
type persisted struct {
	Pins map[string]string `json:"pins"`
	Off  map[string]bool   `json:"off,omitempty"`
	// ServersOff are the servers switched off in the panel (mcp.json's own
	// "disabled" is the file's switch; this one leaves the file alone).
	ServersOff map[string]bool `json:"servers_off,omitempty"`
}

func (p persisted) clone() persisted {
	return persisted{Pins: maps.Clone(p.Pins), Off: maps.Clone(p.Off), ServersOff: maps.Clone(p.ServersOff)}
}

func loadState(path string) (persisted, error) {
	st := persisted{Pins: map[string]string{}, Off: map[string]bool{}, ServersOff: map[string]bool{}}
	if path == "" {
		return st, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		// Refuse rather than start over: starting over would trust every
		// changed definition again.
		return st, fmt.Errorf("%s: the MCP tool pins are not valid JSON (%v); fix or remove the file", path, err)
	}
	if st.Pins == nil {
		st.Pins = map[string]string{}
	}
	if st.Off == nil {
		st.Off = map[string]bool{}
	}
	if st.ServersOff == nil {
		st.ServersOff = map[string]bool{}
	}
	return st, nil
}

// saveState writes the file atomically, 0600.
func saveState(path string, st persisted) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return fsperm.WriteFile(path, append(b, '\n'))
}
