package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/api"
)

// The standard's own example secret, and the same with its prefix: the
// reference libraries read both as the same base64 key.
const bareSecret = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

var secretForms = map[string]string{"without prefix": bareSecret, "with whsec_ prefix": "whsec_" + bareSecret}

// runWebhookJS runs the reference library on input and returns its output.
func runWebhookJS(t *testing.T, dir, cmd, secret string, input any) (string, error) {
	t.Helper()
	b, _ := json.Marshal(input)
	c := exec.Command("node", filepath.Join(dir, "webhook.cjs"), cmd, secret)
	c.Stdin = bytes.NewReader(b)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		return out.String(), &jsError{err, errb.String()}
	}
	return out.String(), nil
}

type jsError struct {
	err    error
	stderr string
}

func (e *jsError) Error() string { return e.err.Error() + ": " + e.stderr }

const signedAgent = `{"agentId":"signed","displayName":"Signed","type":"external","external":{"inputUrl":%q,"secretRef":"hook"}}`

// TestReferenceLibrarySignsJarvisVerifies: a callback signed by the npm
// standardwebhooks library with the agent's secret is accepted, whether the
// secret carries the whsec_ prefix or not (without it, Jarvis used to take
// the secret's raw bytes as the key and refused the reference signature).
func TestReferenceLibrarySignsJarvisVerifies(t *testing.T) {
	dir := nodePeers(t)
	for name, secret := range secretForms {
		t.Run(name, func(t *testing.T) {
			agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"ok":true}`) }))
			defer agent.Close()
			srv, c := startService(t, fmt.Sprintf(signedAgent, agent.URL), secrets{"hook": secret})
			sid := "ext-session-1"
			if err := c.Do(ctxFor(t), http.MethodPost, "/api/plugins/sessions/operations/create", api.CreateOperationRequest{AgentID: "signed", SessionID: &sid}, nil); err != nil {
				t.Fatal(err)
			}
			body := "A *signed* reply from the agent."
			out, err := runWebhookJS(t, dir, "sign", secret, map[string]any{"id": "msg_ref_1", "timestamp": time.Now().Unix(), "body": body})
			if err != nil {
				t.Fatal(err)
			}
			var hdr map[string]string
			if err := json.Unmarshal([]byte(out), &hdr); err != nil {
				t.Fatalf("reference signer printed %q", out)
			}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/external/sessions/"+sid+"/messages", strings.NewReader(body))
			req.Header.Set("Content-Type", "text/markdown")
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var got api.ExternalMessageResponse
			if resp.StatusCode != 200 || json.Unmarshal(b, &got) != nil || !got.OK || got.EventID == 0 {
				t.Fatalf("Jarvis refused the reference signature: %d %s", resp.StatusCode, b)
			}
		})
	}
}

// TestJarvisSignsReferenceLibraryVerifies: what Jarvis forwards to an
// external agent configured with a secret passes the npm standardwebhooks
// library's verify with that secret, prefixed or not.
func TestJarvisSignsReferenceLibraryVerifies(t *testing.T) {
	dir := nodePeers(t)
	for name, secret := range secretForms {
		t.Run(name, func(t *testing.T) {
			type delivery struct {
				hdr  map[string]string
				body string
			}
			got := make(chan delivery, 4)
			agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got <- delivery{map[string]string{
					"webhook-id":        r.Header.Get("webhook-id"),
					"webhook-timestamp": r.Header.Get("webhook-timestamp"),
					"webhook-signature": r.Header.Get("webhook-signature"),
				}, string(b)}
				io.WriteString(w, `{"ok":true}`)
			}))
			defer agent.Close()
			_, c := startService(t, fmt.Sprintf(signedAgent, agent.URL), secrets{"hook": secret})
			s, err := c.CreateSession(ctxFor(t), api.CreateSessionRequest{JarvisSessionID: "j-signed", AgentID: "signed"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Chat(ctxFor(t), s.GeneralSessionID, "please sign this"); err != nil {
				t.Fatal(err)
			}
			var d delivery
			select {
			case d = <-got:
			case <-time.After(30 * time.Second):
				t.Fatal("no forward reached the agent")
			}
			if d.hdr["webhook-signature"] == "" {
				t.Fatalf("the forward is not signed: %v", d.hdr)
			}
			if _, err := runWebhookJS(t, dir, "verify", secret, map[string]any{"headers": d.hdr, "body": d.body}); err != nil {
				t.Fatalf("the reference library refused Jarvis's signature: %v", err)
			}
			// The judge is not a pushover: one changed byte fails it.
			if _, err := runWebhookJS(t, dir, "verify", secret, map[string]any{"headers": d.hdr, "body": d.body + " "}); err == nil {
				t.Fatal("the reference library verified a changed body")
			}
		})
	}
}
