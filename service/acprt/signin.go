package acprt

// Signing an ACP agent in from the window: the auth methods the agent
// offered when it refused to start a session (initialize's authMethods,
// GET /v1/agents/{agentId}/sign-in), and an API key for a method that
// reads keys from the agent's environment (PUT …/sign-in): each key goes to
// the secret store (the keyring) and into the agent's environment from its
// next start on, where acpagent signs in with it (authenticate). A method
// that needs a login run in a terminal is described, not run (not built).

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"jarvis/api"
	"jarvis/service/acpagent"
	"jarvis/service/httpapi"
	"jarvis/service/turn"
)

// signInRef is the secret of one variable of an agent's sign-in.
func signInRef(agentID, name string) string { return "acp_" + agentID + "_" + name }

// signInIndex is the secret listing the variables stored for an agent.
func signInIndex(agentID string) string { return "acp_" + agentID + "_vars" }

// offered records the methods an agent offered when it asked to sign in.
func (rt *Runtime) offered(agentID string, ms []acpagent.AuthMethod) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.signIn == nil {
		rt.signIn = map[string][]acpagent.AuthMethod{}
	}
	rt.signIn[agentID] = ms
}

// signInEnv adds to env ("KEY=value") the sign-in keys stored for the
// agent that its chat.env does not set.
func (rt *Runtime) signInEnv(agentID string, set map[string]string, env []string) []string {
	if rt.env.Secrets == nil {
		return env
	}
	list, err := rt.env.Secrets.Get(signInIndex(agentID))
	if err != nil {
		return env
	}
	for _, name := range strings.Split(list, ",") {
		if _, ok := set[name]; ok || name == "" {
			continue
		}
		if v, err := rt.env.Secrets.Get(signInRef(agentID, name)); err == nil && v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

func (rt *Runtime) acpAgentOf(r *http.Request) (string, error) {
	id := r.PathValue("agentId")
	c := rt.env.Config()
	a, ok := c.Agent(id)
	if !ok {
		return "", httpapi.Errorf(http.StatusNotFound, "agent_not_found", "no agent %q", id).With("field", "agentId")
	}
	if turn.KindOf(c, a) != turn.KindACP {
		return "", httpapi.Errorf(http.StatusConflict, "not_acp_agent", "agent %q is not an ACP agent: it has no sign-in methods", id).With("field", "agentId")
	}
	return id, nil
}

// handleGetSignIn is GET /v1/agents/{agentId}/sign-in.
func (rt *Runtime) handleGetSignIn(w http.ResponseWriter, r *http.Request) error {
	id, err := rt.acpAgentOf(r)
	if err != nil {
		return err
	}
	rt.mu.Lock()
	ms := append([]acpagent.AuthMethod{}, rt.signIn[id]...)
	rt.mu.Unlock()
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"methods": ms})
}

// handlePutSignIn is PUT /v1/agents/{agentId}/sign-in: the keys of one
// env_var method, stored in the keyring and given to the agent from its
// next start on.
func (rt *Runtime) handlePutSignIn(w http.ResponseWriter, r *http.Request) error {
	id, err := rt.acpAgentOf(r)
	if err != nil {
		return err
	}
	var req api.SignInRequest
	if err := httpapi.DecodeJSON(w, r, &req, rt.env.Config().MaxBodyBytes); err != nil {
		return err
	}
	rt.mu.Lock()
	ms := rt.signIn[id]
	rt.mu.Unlock()
	i := slices.IndexFunc(ms, func(m acpagent.AuthMethod) bool { return m.ID == req.MethodID })
	if i < 0 {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "the agent did not offer the sign-in method %q", req.MethodID).With("field", "methodId")
	}
	m := ms[i]
	if m.Kind == "terminal" || m.Kind == "agent" {
		return rt.authenticate(w, r, id, m)
	}
	if m.Kind != "env_var" {
		return httpapi.Errorf(http.StatusBadRequest, "invalid_field", "Jarvis cannot sign in with %q: %s", m.Name, m.Description).With("field", "methodId")
	}
	for _, v := range m.Vars {
		if strings.TrimSpace(req.Values[v]) == "" {
			return httpapi.Errorf(http.StatusBadRequest, "missing_field", "give the key for %s", v).With("field", "values."+v)
		}
	}
	if rt.opts.PutSecret == nil {
		return httpapi.Errorf(http.StatusServiceUnavailable, "keyring_unavailable", "this service cannot store keys")
	}
	names := m.Vars
	if rt.env.Secrets != nil {
		if old, err := rt.env.Secrets.Get(signInIndex(id)); err == nil {
			for _, n := range strings.Split(old, ",") {
				if n != "" && !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	for _, v := range m.Vars {
		if _, err := rt.opts.PutSecret(signInRef(id, v), strings.TrimSpace(req.Values[v])); err != nil {
			return httpapi.Errorf(http.StatusServiceUnavailable, "keyring_unavailable", "the key could not be stored: %v", err)
		}
	}
	if _, err := rt.opts.PutSecret(signInIndex(id), strings.Join(names, ",")); err != nil {
		return httpapi.Errorf(http.StatusServiceUnavailable, "keyring_unavailable", "the key could not be stored: %v", err)
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "message": fmt.Sprintf("Stored. Send your message again: %s signs in with it.", id)})
}

// signInWait bounds an authenticate: the agent's own login waits for the
// user (a browser page), a terminal login's has already run.
const signInWait = 5 * time.Minute

// authenticate signs the agent in with a terminal or agent method: a
// process of the agent started for it calls authenticate, then stops; the
// agent keeps what the login stored (its own files), so the next turn's
// process starts signed in.
func (rt *Runtime) authenticate(w http.ResponseWriter, r *http.Request, agentID string, m acpagent.AuthMethod) error {
	c := rt.env.Config()
	agent, _ := c.Agent(agentID)
	ch := c.ResolvedChat(agent)
	env, dir, err := rt.launch(agent, ch)
	if err != nil {
		return httpapi.Errorf(http.StatusBadGateway, "acp_failed", "the agent could not be started to sign in: %v", err)
	}
	a, err := acpagent.New(acpagent.Options{Command: ch.Command, Args: ch.Args, Env: env, WorkDir: dir, Logger: rt.env.Log})
	if err != nil {
		return httpapi.Errorf(http.StatusBadGateway, "acp_failed", "the agent could not be started to sign in: %v", err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(r.Context(), signInWait)
	defer cancel()
	if err := a.SignIn(ctx, m.ID); err != nil {
		return httpapi.Errorf(http.StatusBadGateway, "sign_in_failed", "%s", strings.TrimPrefix(err.Error(), "acpagent: "))
	}
	return httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "message": fmt.Sprintf("Signed in (%s). Send your message again.", m.Name)})
}
