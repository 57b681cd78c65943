package gate

// Credential stores: the default rules that make every call on a
// well-known credential file (SSH and other private keys, cloud, GitHub,
// Docker and Kubernetes credentials, .netrc, GnuPG, browser profiles, .env
// files) ask first, with a prompt that says the file holds credentials.
// They are ordinary policy rules: the Permissions page shows them, and the
// user may edit or revoke them (an "allow" there lets them through). A
// policy gets them once (Policy.Defaults): a new one at its creation, an
// older one at its first load, and a rule the user revoked stays revoked.
// search_files leaves out what they would ask for (Hides).

import (
	"encoding/json"
)

// CredentialNote is what a prompt for a credential file says.
const CredentialNote = "this file holds credentials"

// defaultsVersion is the version of the default rules; a policy whose
// Defaults is below it gets the rules added since.
const defaultsVersion = 1

// credentialPaths are path globs relative to the workspace; "*" spans
// folders, so each matches at any depth (the home folder as the
// workspace, or a project inside it).
var credentialPaths = []string{
	"*.ssh/*",
	"*id_rsa", "*id_dsa", "*id_ecdsa", "*id_ed25519", "*.pem", "*.p12", "*.pfx", "*.ppk",
	"*.aws/credentials", "*.aws/config",
	"*.netrc",
	"*.config/gh/hosts.yml",
	"*.docker/config.json",
	"*.kube/config",
	"*.gnupg/*",
	"*.password-store/*",
	"*.mozilla/*", "*.config/google-chrome/*", "*.config/chromium/*", "*.config/BraveSoftware/*",
	"*.env", "*.env.local", "*.env.production",
}

// CredentialRules are the default rules: every tool whose path matches a
// credential store asks first.
func CredentialRules() []Rule {
	out := make([]Rule, 0, len(credentialPaths))
	for _, p := range credentialPaths {
		out = append(out, Rule{Tool: "*", Args: map[string]string{"path": p}, Action: Ask, Note: CredentialNote})
	}
	return out
}

// WithDefaults adds the default rules p has not had yet (a policy kept in
// memory only starts with them too).
func WithDefaults(p Policy) Policy {
	if p.Defaults >= defaultsVersion {
		return p
	}
	p = p.clone()
	p.Rules = append(p.Rules, CredentialRules()...)
	p.Defaults = defaultsVersion
	return p
}

// Hides reports whether search_files should leave the workspace path rel
// out of its results: reading it would not run without asking (an ask or
// deny rule, such as a credential store's).
func (g *Gate) Hides(rel string) bool {
	path, _ := json.Marshal(rel)
	args := map[string]json.RawMessage{"path": path}
	g.mu.RLock()
	defer g.mu.RUnlock()
	r := g.policy.match("read_file", args, g.ws)
	return r != nil && r.Action != Allow
}
