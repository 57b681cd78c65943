package mcp

import (
	"fmt"
	"sort"
	"strings"
)

// An mcp.json entry starts a program or sends headers to a URL, so the
// Manager runs only entries the user approved: each server's approval is
// the hash of what it would start or where it would connect (ApprovalHash),
// kept in the state file in the data dir, which Jarvis's file tools cannot
// reach. An entry that is new (a first start with a new file too) or
// changed outside Jarvis waits, in StateApproval, showing its Approval,
// until the user approves that hash in the window or with `jarvis mcp
// approve`. Switching a server off or on, or its call timeout, needs none.

// StateApproval is a server waiting for the user's approval of its entry.
const StateApproval = "approval"

// Approval is what an entry waiting for approval would do: shown to the
// user, and its Hash is what an approval must carry.
type Approval struct {
	Hash string `json:"hash"`
	// Launch is the command line of a stdio server or the URL of a remote one.
	Launch  string   `json:"launch"`
	Cwd     string   `json:"cwd,omitempty"`
	Env     []string `json:"env,omitempty"`     // NAME=value, keyring references as written
	Headers []string `json:"headers,omitempty"` // names only
	Changed bool     `json:"changed"`           // an approved entry changed (else new)
}

// ApprovalHash is the approval's binding: every field of an entry that
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
	}
	v.Command, v.Args, v.Env, v.Cwd, v.URL, v.Headers, v.Type = sc.Command, sc.Args, sc.Env, sc.Cwd, sc.URL, sc.Headers, sc.transport()
	return "v1:" + canonicalHash(v)
}

// approvalOf describes sc for the user; prior is the hash approved before
// ("" when none).
func approvalOf(sc ServerConfig, prior string) *Approval {
	a := &Approval{Hash: ApprovalHash(sc), Cwd: sc.Cwd, Changed: prior != ""}
	if sc.IsHTTP() {
		a.Launch = sc.URL
		for k := range sc.Headers {
			a.Headers = append(a.Headers, k)
		}
		sort.Strings(a.Headers)
	} else {
		a.Launch = shellLine(append([]string{sc.Command}, sc.Args...))
		for k, v := range sc.Env {
			a.Env = append(a.Env, k+"="+v)
		}
		sort.Strings(a.Env)
	}
	return a
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

// ApproveServer approves server name's entry, the one whose hash the user
// was shown, and starts it (unless switched off). An entry changed since
// (another hash) is refused.
func (m *Manager) ApproveServer(name, hash string) error {
	m.mu.Lock()
	s, ok := m.servers[name]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("no MCP server %q in %s", name, m.opts.ConfigPath)
	}
	if hash == "" || ApprovalHash(s.cfg) != hash {
		m.mu.Unlock()
		return fmt.Errorf("the entry of MCP server %q changed again since it was shown to you; nothing was approved: look at it again", name)
	}
	m.state.Approved[name] = hash
	snap := m.state.clone()
	m.mu.Unlock()
	if err := saveState(m.opts.StatePath, snap); err != nil {
		return err
	}
	m.log.Info("mcp: server entry approved", "server", name, "hash", hash)
	return m.restart(name)
}
