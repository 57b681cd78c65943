package tools

// One canonical form per call. The gate matches policy rules and session
// grants on argument names and values, so every spelling of the same call
// must reach it as the same text: argument names are matched exactly (no
// case or Unicode folding, which encoding/json would apply: "PATH", "Path"
// and "argſ" would all fill the field named "path"/"args"), a repeated or
// unknown name is refused, and paths become their clean workspace-relative
// form with every symlink resolved. The executor then runs that canonical
// form, so what was classified, prompted and audited is what runs.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// decode reads a JSON object strictly into the struct v: every name must be
// exactly one of v's json field names and appear at most once (the schemas
// say additionalProperties is false). Missing or null arguments are an empty
// object.
func decode(args json.RawMessage, v any) error {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		t = []byte("{}")
	}
	if t[0] != '{' {
		return fmt.Errorf("%w: arguments must be a JSON object", ErrBadArguments)
	}
	if err := checkNames(t, fieldNames(v)); err != nil {
		return err
	}
	// The names are now exact, so encoding/json's folding match has
	// nothing to fold.
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrBadArguments, err)
	}
	if err := dec.Decode(&struct{}{}); err != io.EOF {
		return fmt.Errorf("%w: trailing data after the arguments object", ErrBadArguments)
	}
	return nil
}

// checkNames walks the object's top level and refuses a name that is not
// exactly one of allowed, or that repeats.
func checkNames(obj []byte, allowed []string) error {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // '{'
		return fmt.Errorf("%w: %v", ErrBadArguments, err)
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadArguments, err)
		}
		name, _ := tok.(string)
		if seen[name] {
			return fmt.Errorf("%w: argument %q is given twice", ErrBadArguments, name)
		}
		seen[name] = true
		if !contains(allowed, name) {
			for _, a := range allowed {
				if strings.EqualFold(a, name) { // Unicode simple folding: ſ is s, K is k
					return fmt.Errorf("%w: unknown argument %q (argument names are exact: %q)", ErrBadArguments, name, a)
				}
			}
			return fmt.Errorf("%w: unknown argument %q (allowed: %s)", ErrBadArguments, name, strings.Join(allowed, ", "))
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return fmt.Errorf("%w: %v", ErrBadArguments, err)
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("%w: %v", ErrBadArguments, err)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fieldNames lists the json names of the struct v points to.
func fieldNames(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	if t.Kind() != reflect.Struct {
		return names
	}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// canonicalJSON encodes canonical arguments: names sorted (encoding/json
// sorts map keys), no HTML escaping, no insignificant space.
func canonicalJSON(m map[string]any) (json.RawMessage, error) {
	if m == nil {
		m = map[string]any{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadArguments, err)
	}
	return json.RawMessage(bytes.TrimRight(buf.Bytes(), "\n")), nil
}
