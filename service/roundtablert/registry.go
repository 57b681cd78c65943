package roundtablert

// Round-table agent registration (docs/protocols/roundtable-agents.md): POST/GET/PUT/PATCH/DELETE
// /api/v1/agents. Registrations live in SQLite; an agent's API key lives in
// the OS keyring under "roundtable:<name>" (JARVIS_SECRET_ROUNDTABLE_<NAME>
// overrides it) and never in the database, a response or a log.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"jarvis/api"
	"jarvis/service/httpapi"
	"jarvis/service/roundtable"
	"jarvis/service/secrets"
	"jarvis/service/store"
)

// maxAgentTimeoutSeconds bounds a registration's timeout_seconds: an agent
// that needs longer than an hour per answer is not a round-table agent.
const maxAgentTimeoutSeconds = 3600

// rtKeyRef is the keyring reference of a round-table agent's API key.
func rtKeyRef(name string) string { return "roundtable:" + name }

func (rt *Runtime) handleRTAgentCreate(w http.ResponseWriter, r *http.Request) error {
	var req api.RoundtableAgentRegistration
	if err := httpapi.DecodeJSON(w, r, &req, rt.env.Config().MaxBodyBytes); err != nil {
		return err
	}
	ctx := r.Context()
	a, err := rt.validateRTRegistration(ctx, req)
	if err != nil {
		return err
	}
	row := store.RoundtableAgent{Name: a.Name, Domain: a.Domain, BaseURL: a.BaseURL, Capabilities: jsonList(a.Capabilities),
		Mode: a.Mode, TimeoutSeconds: req.TimeoutSeconds}
	if req.APIKey != "" {
		row.APIKeyRef = rtKeyRef(a.Name)
	}
	// The row first: a duplicate name must not overwrite the existing
	// agent's key.
	created, err := rt.env.Store.CreateRoundtableAgent(ctx, row)
	if errors.Is(err, store.ErrConflict) {
		return httpapi.Errorf(http.StatusConflict, "agent_exists", "a round-table agent named %q is already registered (PUT or PATCH /api/v1/agents/%s to change it)", a.Name, a.Name).With("field", "name")
	}
	if err != nil {
		return err
	}
	var where string
	if req.APIKey != "" {
		if where, err = rt.storeRTKey(a.Name, req.APIKey); err != nil {
			if _, derr := rt.env.Store.DeleteRoundtableAgent(context.WithoutCancel(ctx), a.Name); derr != nil {
				rt.env.Log.Error("undo round-table registration", "agent", a.Name, "err", derr)
			}
			return err
		}
	}
	rt.env.Log.Info("round-table agent registered", "agent", a.Name, "base_url", a.BaseURL, "api_key", req.APIKey != "")
	return httpapi.WriteJSON(w, http.StatusCreated, withKeyStorage(rt.rtAgentInfo(created), where))
}

func (rt *Runtime) handleRTAgentList(w http.ResponseWriter, r *http.Request) error {
	rows, err := rt.env.Store.RoundtableAgents(r.Context())
	if err != nil {
		return err
	}
	out := api.RoundtableAgentList{Agents: []api.RoundtableAgent{}}
	for _, a := range rows {
		out.Agents = append(out.Agents, rt.rtAgentInfo(a))
	}
	return httpapi.WriteJSON(w, http.StatusOK, out)
}

func (rt *Runtime) handleRTAgentGet(w http.ResponseWriter, r *http.Request) error {
	a, err := rt.rtAgentRow(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, rt.rtAgentInfo(a))
}

// handleRTAgentPut replaces a registration; an absent api_key removes the key.
func (rt *Runtime) handleRTAgentPut(w http.ResponseWriter, r *http.Request) error {
	var req api.RoundtableAgentRegistration
	if err := httpapi.DecodeJSON(w, r, &req, rt.env.Config().MaxBodyBytes); err != nil {
		return err
	}
	name := r.PathValue("name")
	if req.Name != "" && strings.TrimSpace(req.Name) != name {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_registration", "name %q in the body differs from %q in the path; an agent cannot be renamed (delete and register it again)", req.Name, name).
			With("problems", []roundtable.FieldProblem{{Field: "name", Problem: "differs from the path"}}).With("fields", []string{"name"})
	}
	req.Name = name
	return rt.updateRTAgent(w, r, req)
}

// handleRTAgentPatch changes the fields present in the body.
func (rt *Runtime) handleRTAgentPatch(w http.ResponseWriter, r *http.Request) error {
	var p api.RoundtableAgentPatch
	if err := httpapi.DecodeJSON(w, r, &p, rt.env.Config().MaxBodyBytes); err != nil {
		return err
	}
	cur, err := rt.rtAgentRow(r.Context(), r.PathValue("name"))
	if err != nil {
		return err
	}
	req := api.RoundtableAgentRegistration{Name: cur.Name, Domain: cur.Domain, BaseURL: cur.BaseURL, Capabilities: jsonStrings(cur.Capabilities),
		Mode: cur.Mode, TimeoutSeconds: cur.TimeoutSeconds}
	keep := p.APIKey == nil
	if p.APIKey != nil {
		req.APIKey = *p.APIKey
	}
	if p.Domain != nil {
		req.Domain = *p.Domain
	}
	if p.BaseURL != nil {
		req.BaseURL = *p.BaseURL
	}
	if p.Capabilities != nil {
		req.Capabilities = *p.Capabilities
	}
	if p.Mode != nil {
		req.Mode = *p.Mode
	}
	if p.TimeoutSeconds != nil {
		req.TimeoutSeconds = *p.TimeoutSeconds
	}
	if keep {
		return rt.updateRTAgentKeepKey(w, r, req, cur)
	}
	return rt.updateRTAgent(w, r, req)
}

// updateRTAgent stores req (key included: "" removes it).
func (rt *Runtime) updateRTAgent(w http.ResponseWriter, r *http.Request, req api.RoundtableAgentRegistration) error {
	ctx := r.Context()
	cur, err := rt.rtAgentRow(ctx, req.Name)
	if err != nil {
		return err
	}
	a, err := rt.validateRTRegistration(ctx, req)
	if err != nil {
		return err
	}
	row := store.RoundtableAgent{Name: cur.Name, Domain: a.Domain, BaseURL: a.BaseURL, Capabilities: jsonList(a.Capabilities), Mode: a.Mode, TimeoutSeconds: req.TimeoutSeconds}
	var where string
	if req.APIKey != "" {
		if where, err = rt.storeRTKey(cur.Name, req.APIKey); err != nil {
			return err
		}
		row.APIKeyRef = rtKeyRef(cur.Name)
	}
	updated, err := rt.env.Store.UpdateRoundtableAgent(ctx, row)
	if err != nil {
		return err
	}
	if req.APIKey == "" && cur.APIKeyRef != "" {
		rt.deleteRTKey(cur.APIKeyRef)
	}
	return httpapi.WriteJSON(w, http.StatusOK, withKeyStorage(rt.rtAgentInfo(updated), where))
}

// withKeyStorage marks an answer whose key went to the less protected
// fallback file (no OS keyring), so that the caller can tell its user.
func withKeyStorage(info api.RoundtableAgent, where string) api.RoundtableAgent {
	if where == secrets.InFile {
		info.KeyStorage = where
	}
	return info
}

// updateRTAgentKeepKey stores req's fields and leaves the key as it is.
func (rt *Runtime) updateRTAgentKeepKey(w http.ResponseWriter, r *http.Request, req api.RoundtableAgentRegistration, cur store.RoundtableAgent) error {
	ctx := r.Context()
	a, err := rt.validateRTRegistration(ctx, req)
	if err != nil {
		return err
	}
	updated, err := rt.env.Store.UpdateRoundtableAgent(ctx, store.RoundtableAgent{Name: cur.Name, Domain: a.Domain, BaseURL: a.BaseURL,
		Capabilities: jsonList(a.Capabilities), Mode: a.Mode, APIKeyRef: cur.APIKeyRef, TimeoutSeconds: req.TimeoutSeconds})
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, rt.rtAgentInfo(updated))
}

func (rt *Runtime) handleRTAgentDelete(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	a, err := rt.env.Store.DeleteRoundtableAgent(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return rtAgentNotFound(name)
	}
	if err != nil {
		return err
	}
	if a.APIKeyRef != "" {
		rt.deleteRTKey(a.APIKeyRef)
	}
	rt.env.Log.Info("round-table agent deleted", "agent", name)
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func rtAgentNotFound(name string) error {
	return httpapi.Errorf(http.StatusNotFound, "agent_not_found", "no round-table agent named %q is registered (GET /api/v1/agents lists them)", name).With("name", name)
}

func (rt *Runtime) rtAgentRow(ctx context.Context, name string) (store.RoundtableAgent, error) {
	a, err := rt.env.Store.RoundtableAgent(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return a, rtAgentNotFound(name)
	}
	return a, err
}

// validateRTRegistration checks every field and reports all problems at
// once: 400 invalid_registration with details.problems [{field, problem}]
// and details.fields.
func (rt *Runtime) validateRTRegistration(ctx context.Context, req api.RoundtableAgentRegistration) (roundtable.Agent, error) {
	a, err := roundtable.ValidateRegistrationContext(ctx, roundtable.Registration{Name: req.Name, Domain: req.Domain, BaseURL: req.BaseURL,
		APIKey: req.APIKey, Capabilities: req.Capabilities, Mode: req.Mode}, net.DefaultResolver)
	var problems []roundtable.FieldProblem
	var re *roundtable.RegistrationError
	switch {
	case errors.As(err, &re):
		problems = append(problems, re.Problems...)
	case err != nil:
		return a, err
	}
	if req.TimeoutSeconds < 0 || req.TimeoutSeconds > maxAgentTimeoutSeconds {
		problems = append(problems, roundtable.FieldProblem{Field: "timeout_seconds", Problem: fmt.Sprintf("must be between 0 (the default, 120) and %d", maxAgentTimeoutSeconds)})
	}
	if len(problems) == 0 {
		return a, nil
	}
	fields := make([]string, 0, len(problems))
	msgs := make([]string, 0, len(problems))
	for _, p := range problems {
		fields = append(fields, p.Field)
		msgs = append(msgs, p.Field+" "+p.Problem)
	}
	he := httpapi.Errorf(http.StatusBadRequest, "invalid_registration", "invalid agent registration: %s", strings.Join(msgs, "; ")).
		With("problems", problems).With("fields", fields)
	if errors.Is(err, roundtable.ErrBlockedAddress) {
		he = he.With("blocked_address", true)
	}
	return a, he
}

// storeRTKey puts an agent's key in the keyring (or the fallback file) and
// says where. When neither can take it, the environment override is
// accepted if it already holds that very key; otherwise the registration
// fails with a way out.
func (rt *Runtime) storeRTKey(name, key string) (string, error) {
	ref := rtKeyRef(name)
	where, err := rt.opts.PutSecret(ref, key)
	if err == nil {
		return where, nil
	}
	if rt.env.Secrets != nil {
		if v, gerr := rt.env.Secrets.Get(ref); gerr == nil && v == key {
			return secrets.InEnv, nil
		}
	}
	rt.env.Log.Warn("round-table agent key not stored", "agent", name, "ref", ref, "err", err)
	return "", httpapi.Errorf(http.StatusServiceUnavailable, "keyring_unavailable",
		"the API key could not be stored in the OS keyring (%v); set %s to the key in the service's environment and register again, or retry when the keyring is available",
		err, secrets.EnvName(ref)).With("field", "api_key").With("env", secrets.EnvName(ref))
}

func (rt *Runtime) deleteRTKey(ref string) {
	if rt.opts.DeleteSecret == nil {
		return
	}
	if err := rt.opts.DeleteSecret(ref); err != nil {
		rt.env.Log.Warn("round-table agent key not removed from the keyring", "ref", ref, "err", err)
	}
}

// rtKey returns the key of an agent registered with one: the environment
// override JARVIS_SECRET_ROUNDTABLE_<NAME> or the keyring entry. Agents
// registered without a key are not looked up, so that a slow or absent
// keyring never delays their round tables.
func (rt *Runtime) rtKey(a store.RoundtableAgent) (string, error) {
	if a.APIKeyRef == "" {
		return "", nil
	}
	if rt.env.Secrets == nil {
		return "", errors.New("no secret store is configured")
	}
	return rt.env.Secrets.Get(a.APIKeyRef)
}

func (rt *Runtime) rtAgentInfo(a store.RoundtableAgent) api.RoundtableAgent {
	info := api.RoundtableAgent{Name: a.Name, Domain: a.Domain, BaseURL: a.BaseURL, Capabilities: jsonStrings(a.Capabilities), Mode: a.Mode,
		HasAPIKey: a.APIKeyRef != "", APIKeyRef: rtKeyRef(a.Name), TimeoutSeconds: a.TimeoutSeconds,
		Health: api.AgentStatus{State: a.Health, Detail: a.HealthDetail, At: a.HealthAt}, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt}
	if info.TimeoutSeconds == 0 {
		info.TimeoutSeconds = int(roundtable.DefaultCallTimeout.Seconds())
	}
	return info
}

func jsonList(xs []string) string {
	if xs == nil {
		xs = []string{}
	}
	b, _ := json.Marshal(xs)
	return string(b)
}

func jsonStrings(s string) []string {
	out := []string{}
	json.Unmarshal([]byte(s), &out)
	return out
}
