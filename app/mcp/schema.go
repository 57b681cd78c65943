package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// compiledSchema is a tool's input schema, resolved once when listed.
type compiledSchema struct{ rs *jsonschema.Resolved }

// compileSchema resolves an input schema (draft 2020-12 or draft-07, the
// two MCP servers use). References to other documents are refused: a
// schema never makes the desktop fetch anything.
func compileSchema(raw json.RawMessage) (*compiledSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, err
	}
	return &compiledSchema{rs: rs}, nil
}

// validate checks args (a JSON object; null or nothing is {}) against the
// schema and returns their canonical JSON: keys sorted, no spaces, numbers
// as written.
func (c *compiledSchema) validate(args json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		t = []byte("{}")
	}
	if t[0] != '{' {
		return nil, errors.New("the arguments are not a JSON object")
	}
	var inst any
	if err := json.Unmarshal(t, &inst); err != nil {
		return nil, fmt.Errorf("the arguments are not JSON: %w", err)
	}
	if err := c.rs.Validate(inst); err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(t))
	d.UseNumber() // 2^53+1 stays 2^53+1
	var exact any
	if err := d.Decode(&exact); err != nil {
		return nil, err
	}
	return json.Marshal(exact) // maps marshal with sorted keys
}
