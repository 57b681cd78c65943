package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"jarvis/internal/approved"
)

// An mcp.json entry starts a program or sends headers to a URL, so the
// Manager runs only entries the user approved. The approved mcp.json is
// kept in the data dir's store of approved contents (internal/approved,
// name ApprovedName), which Jarvis's file tools cannot reach; an entry of
// the file runs only while it is the same (ApprovalHash) as in the last
// approved content. An entry that is new (a first start with a new file
// too) or changed outside Jarvis waits, in StateApproval, showing its
// Approval, until the user approves the file as shown (its approved.Hash)
// in the window or with `jarvis mcp approve`; the other entries keep
// running meanwhile. Switching a server off or on, or its call timeout,
// needs no approval. How a stdio server is confined ("sandbox", "network")
// is part of its entry: "sandbox": false runs it with the user's full
// access, and approving such an entry, whose Approval says so in plain
// words, is the user's one-time confirmation (asked again whenever the
// entry changes).

// ApprovedName is mcp.json's name in the store of approved contents.
const ApprovedName = "mcp.json"

// StateApproval is a server waiting for the user's approval of its entry.
const StateApproval = "approval"

// Approval is what an entry waiting for approval would do, shown to the
// user. Hash is the hash of the whole mcp.json shown (approved.Hash): what
// an approval must carry.
type Approval struct {
	Hash string `json:"hash"`
	// Launch is the command line of a stdio server or the URL of a remote one.
	Launch  string   `json:"launch"`
	Cwd     string   `json:"cwd,omitempty"`
	Env     []string `json:"env,omitempty"`     // NAME=value, keyring references as written
	Headers []string `json:"headers,omitempty"` // names only
	Changed bool     `json:"changed"`           // an approved entry changed (else new)
	// Sandbox says in plain words how a stdio server would run: in the
	// sandbox (with or without network) or WITHOUT it. Unsandboxed is the
	// latter ("sandbox": false): approving it is the user's one-time
	// confirmation that the server runs with the user's full access.
	Sandbox     string `json:"sandbox,omitempty"`
	Unsandboxed bool   `json:"unsandboxed,omitempty"`
}

// ApprovalHash is an entry's identity for approval: every field that
// decides what runs or what is sent where.
func ApprovalHash(sc ServerConfig) string {
	var v struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Cwd     string            `json:"cwd"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
		Type    string            `json:"type"`
		// How it is confined; omitted when default, so the entries
		// approved before these fields keep their hash.
		Sandbox *bool `json:"sandbox,omitempty"`
		Network bool  `json:"network,omitempty"`
	}
	v.Command, v.Args, v.Env, v.Cwd, v.URL, v.Headers, v.Type = sc.Command, sc.Args, sc.Env, sc.Cwd, sc.URL, sc.Headers, sc.transport()
	v.Sandbox, v.Network = sc.Sandbox, sc.Network
	return canonicalHash(v)
}

// approvedEntries is the ApprovalHash of each entry of the last approved
// mcp.json (none when nothing was approved or the store is not set).
func (m *Manager) approvedEntries() (map[string]string, error) {
	out := map[string]string{}
	if m.opts.Approved == nil {
		return out, nil
	}
	b, ok, err := m.opts.Approved.Last(ApprovedName)
	if err != nil || !ok {
		return out, err
	}
	if len(b) == 0 {
		return out, nil
	}
	cfg, err := ParseConfig("the approved mcp.json", b)
	if err != nil {
		return out, nil // nothing of it is trusted
	}
	for _, sc := range cfg.Servers {
		out[sc.Name] = ApprovalHash(sc)
	}
	return out, nil
}

// approvalOf describes sc for the user; prior is the approved entry's hash
// ("" when none), file the hash of the mcp.json that holds sc.
func approvalOf(sc ServerConfig, prior, file string) *Approval {
	a := &Approval{Hash: file, Cwd: sc.Cwd, Changed: prior != ""}
	if sc.IsHTTP() {
		a.Launch = sc.URL
		for k := range sc.Headers {
			a.Headers = append(a.Headers, k)
		}
		sort.Strings(a.Headers)
	} else {
		a.Launch = shellLine(append([]string{sc.Command}, sc.Args...))
		a.Sandbox, a.Unsandboxed = sandboxWords(sc), sc.Unsandboxed()
		for k, v := range sc.Env {
			a.Env = append(a.Env, k+"="+v)
		}
		sort.Strings(a.Env)
	}
	return a
}

// sandboxWords says how a stdio server runs, in the words of the approval.
func sandboxWords(sc ServerConfig) string {
	switch {
	case sc.Unsandboxed():
		return "runs WITHOUT the sandbox: it can read, change and delete any of your files, use the network and reach your other programs, as you can"
	case sc.Network:
		return "runs in the sandbox, with network: it writes only in its folder"
	}
	return "runs in the sandbox: it writes only in its folder, no network"
}

// shellLine quotes words that need it, so the line reads as typed.
func shellLine(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w == "" || strings.ContainsAny(w, " \t\n'\"\\$`;&|<>()*?[]#~") {
			w = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		out[i] = w
	}
	return strings.Join(out, " ")
}

// ApproveConfig approves mcp.json as the user was shown it (hash, the
// Approval's) and applies it: its waiting entries start. A file changed
// since (another hash) is refused.
func (m *Manager) ApproveConfig(hash string) error {
	if m.opts.Approved == nil || m.opts.ConfigPath == "" {
		return errors.New("this Jarvis keeps no approvals of mcp.json")
	}
	b, err := os.ReadFile(m.opts.ConfigPath)
	if err != nil {
		return err
	}
	if _, err := ParseConfig(m.opts.ConfigPath, b); err != nil {
		return fmt.Errorf("mcp.json cannot be approved as it is: %w", err)
	}
	if err := m.opts.Approved.ApproveHash(ApprovedName, b, hash); errors.Is(err, approved.ErrChanged) {
		return errors.New("mcp.json changed again since it was shown to you; nothing was approved: look at it again")
	} else if err != nil {
		return err
	}
	m.log.Info("mcp: mcp.json approved", "hash", hash)
	return m.Reload()
}

// RecordApproved records content, which Jarvis's own UI has just written to
// mcp.json, as approved.
func (m *Manager) RecordApproved(content []byte) error {
	if m.opts.Approved == nil {
		return nil
	}
	return m.opts.Approved.Approve(ApprovedName, content)
}

// AddServer adds a server to mcp.json through Jarvis's own UI (the panel's
// Add server): the entry is checked, written, and the file as written is
// approved, so the server starts without a second confirmation. A file
// with changes made outside Jarvis that wait for approval is left alone:
// approving the new file would approve those too.
func (m *Manager) AddServer(name string, entry json.RawMessage) error {
	if m.opts.ConfigPath == "" {
		return errors.New("this Jarvis has no mcp.json")
	}
	one, err := json.Marshal(map[string]map[string]json.RawMessage{"mcpServers": {name: entry}})
	if err != nil {
		return err
	}
	cfg, err := ParseConfig("the new server", one)
	if err != nil {
		return fmt.Errorf("the new server is not valid JSON: %w", err)
	}
	if sc := cfg.Servers[0]; sc.Problem != "" || sc.Name != name {
		if sc.Problem != "" {
			return errors.New(sc.Problem)
		}
		return fmt.Errorf("server name %q: use 1-32 letters, digits, '-' or '_'", name)
	}
	cur, err := os.ReadFile(m.opts.ConfigPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if m.opts.Approved != nil && len(cur) > 0 {
		if ok, err := m.opts.Approved.Check(ApprovedName, cur); err != nil {
			return err
		} else if !ok {
			return errors.New("mcp.json has changes made outside Jarvis that wait for your approval; approve them (or undo them) first")
		}
	}
	added, _, content, err := mergeInto(m.opts.ConfigPath, map[string]json.RawMessage{name: entry})
	if err != nil {
		return err
	}
	if len(added) == 0 {
		return fmt.Errorf("mcp.json already has a server %q", name)
	}
	// A server outside the sandbox waits for its one-time confirmation,
	// the approval that says so, even when added here.
	if !cfg.Servers[0].Unsandboxed() {
		if err := m.RecordApproved(content); err != nil {
			return err
		}
	}
	m.log.Info("mcp: server added in Jarvis", "server", name)
	return m.Reload()
}
