package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
	"jarvis/service/proxy/proxytest"
	"jarvis/service/roundtable"
)

const token = "faults-token-0123456789"

// extPeer is an external agent that accepts every forward and remembers its input.
type extPeer struct {
	mu     sync.Mutex
	inputs []api.ExternalInput
}

func (p *extPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in api.ExternalInput
	json.NewDecoder(r.Body).Decode(&in)
	p.mu.Lock()
	p.inputs = append(p.inputs, in)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"ok":true,"note":"accepted; the answer follows on the callback URL"}`)
}

// rtPeer is a well-behaved round-table agent.
func rtPeer(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/analyze":
			fmt.Fprintf(w, `{"agent_name":%q,"domain":"security","observations":[{"finding":"%s: SQL built by string concatenation in the login query","evidence":"[VERIFIED: auth.py:42] name is concatenated","severity":"critical","confidence":0.9}],"recommendations":[{"action":"Use parameterized queries","rationale":"OWASP A03","priority":"critical"}],"confidence":0.8}`, name, name)
		case "/challenge":
			fmt.Fprintf(w, `{"agent_name":%q,"challenges":[],"concessions":[]}`, name)
		case "/vote":
			fmt.Fprintf(w, `{"agent_name":%q,"approve":true,"conditions":["tests first"]}`, name)
		default:
			http.NotFound(w, r)
		}
	})
}

// world is the real service with an external, a proxy and three round-table
// agents, every faulty one behind the fault proxy.
type world struct {
	t   *testing.T
	fp  *faultProxy
	ext *extPeer
	srv *httptest.Server
	c   *api.Client
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, fp: newFaultProxy(t), ext: &extPeer{}}
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	extSrv := httptest.NewServer(w.ext)
	t.Cleanup(extSrv.Close)
	pa := &proxytest.Agent{}
	paSrv := httptest.NewServer(pa.Handler())
	t.Cleanup(func() { paSrv.Close(); pa.Close() })

	extURL := w.fp.route("ext", extSrv.URL)
	pxURL := w.fp.route("px", paSrv.URL)
	cfg, err := config.Parse("faults.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible",
		"providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},
		"agents":[{"agentId":"general","displayName":"General"},
		  {"agentId":"ext","displayName":"Ext","type":"external","external":{"inputUrl":%q,"timeoutSeconds":1.5}},
		  {"agentId":"px","displayName":"Px","type":"proxy","proxy":{"url":%q,"timeoutSeconds":2,"routeToUser":true}}]}`,
		up.URL+"/v1", extURL+"/input", pxURL+"/sync")))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Config: cfg, Token: token,
		Secrets: testpeer.NewSecrets(nil)})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = httptest.NewServer(svc.Handler())
	t.Cleanup(func() { w.srv.CloseClientConnections(); w.srv.Close(); svc.Close() })
	w.c = api.NewClient(w.srv.URL, token, &http.Client{Timeout: 30 * time.Second})

	for _, n := range []string{"good1", "good2"} {
		s := httptest.NewServer(rtPeer(n))
		t.Cleanup(s.Close)
		w.register(n, s.URL)
	}
	s := httptest.NewServer(rtPeer("faulty"))
	t.Cleanup(s.Close)
	w.register("faulty", w.fp.route("faulty", s.URL))
	return w
}

func (w *world) register(name, url string) {
	w.t.Helper()
	var out api.RoundtableAgent
	if err := w.c.Do(context.Background(), "POST", "/api/v1/agents", api.RoundtableAgentRegistration{Name: name, Domain: "security", BaseURL: url}, &out); err != nil {
		w.t.Fatalf("register %s: %v", name, err)
	}
}

func (w *world) session(agent, jid string) string {
	w.t.Helper()
	r, err := w.c.CreateSession(context.Background(), api.CreateSessionRequest{JarvisSessionID: jid, AgentID: agent})
	if err != nil {
		w.t.Fatal(err)
	}
	return r.GeneralSessionID
}

// turn sends text and returns the turn's events; the turn must end within limit.
func (w *world) turn(sid, text string, limit time.Duration) []api.StreamEvent {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var evs []api.StreamEvent
	err := w.c.ChatStream(ctx, sid, text, func(ev api.StreamEvent) error { evs = append(evs, ev); return nil })
	if err != nil {
		w.t.Fatalf("turn %q: %v (events %v)", text, err, typesOf(evs))
	}
	if len(evs) == 0 || (evs[len(evs)-1].Type != api.EventFinal && evs[len(evs)-1].Type != api.EventError) {
		w.t.Fatalf("turn %q did not end: %v", text, typesOf(evs))
	}
	return evs
}

func typesOf(evs []api.StreamEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

// ending is the turn's last event: the final text or the error code and message.
func ending(t *testing.T, evs []api.StreamEvent) (final string, code string, msg string) {
	last := evs[len(evs)-1]
	if last.Type == api.EventFinal {
		var d api.TextEvent
		json.Unmarshal(last.Data, &d)
		return d.Text, "", ""
	}
	var e api.ErrorEvent
	json.Unmarshal(last.Data, &e)
	return "", e.Code, e.Message
}

// TestExternalAgentFaults: the forward to an external agent's inputUrl. Its
// answer's body is not part of the protocol (only the status counts), so a
// body that breaks off, dribbles, is huge or is not JSON still means
// "accepted"; no answer in time, no answer at all and a redirect are
// external_forward_failed. After each, the session takes a callback reply
// and the next message.
func TestExternalAgentFaults(t *testing.T) {
	w := newWorld(t)
	cases := []struct {
		fault   string
		code    string // "" means accepted
		message string // in the error message
	}{
		{faultLatency, "external_forward_failed", "did not answer within"},
		{faultReset0, "external_forward_failed", "could not reach inputUrl"},
		{faultResetMid, "", ""},
		{faultByteWise, "", ""},
		{faultOversized, "", ""},
		{faultMalformed, "", ""},
		{faultRedirLo, "external_forward_failed", "HTTP 307 (a redirect: redirects are not followed"},
		{faultRedirMeta, "external_forward_failed", "HTTP 307 (a redirect: redirects are not followed"},
	}
	for _, tc := range cases {
		t.Run(tc.fault, func(t *testing.T) {
			sid := w.session("ext", "ext-"+tc.fault)
			w.fp.set("ext", tc.fault)
			start := time.Now()
			final, code, msg := ending(t, w.turn(sid, "hello through "+tc.fault, 15*time.Second))
			took := time.Since(start)
			if code != tc.code || !strings.Contains(msg, tc.message) {
				t.Fatalf("ended with final %q / error %s %q; want error %q containing %q", final, code, msg, tc.code, tc.message)
			}
			if code == "" && final != "Sent to external agent" {
				t.Fatalf("final %q", final)
			}
			if took > 5*time.Second {
				t.Fatalf("the turn took %s: the forward's 1.5 s timeout did not bound it", took)
			}
			if strings.Contains(msg, "token=") {
				t.Fatalf("the error message carries the callback token: %q", msg)
			}
			// The rest goes on: a reply on the callback URL is accepted and
			// shown, and the next message goes through.
			var info api.ExternalSessionInfo
			if err := w.c.Do(context.Background(), "GET", "/v1/external/sessions/"+sid, nil, &info); err != nil {
				t.Fatal(err)
			}
			resp, err := http.Post(info.CallbackURL, "text/plain", strings.NewReader("late but fine"))
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("callback after the fault: %v %v", resp, err)
			}
			resp.Body.Close()
			w.fp.set("ext", faultNone)
			if final, code, _ := ending(t, w.turn(sid, "and again", 10*time.Second)); code != "" || final != "Sent to external agent" {
				t.Fatalf("next message after %s: %q %q", tc.fault, final, code)
			}
		})
	}
	if n := w.fp.trapHits.Load(); n != 0 {
		t.Fatalf("a redirect was followed: the loopback trap was hit %d times", n)
	}
}

// TestProxyAgentFaults: a sync proxy agent (Agent Protocol) behind the fault
// proxy. Each fault is its typed error code; the same session then answers.
func TestProxyAgentFaults(t *testing.T) {
	w := newWorld(t)
	cases := []struct{ fault, code string }{
		{faultLatency, "proxy_timeout"},
		{faultReset0, "proxy_unreachable"},
		{faultResetMid, "proxy_unreachable"},
		{faultByteWise, ""},
		{faultOversized, "proxy_too_large"},
		{faultMalformed, "proxy_malformed"},
		{faultRedirLo, "proxy_redirect"},
		{faultRedirMeta, "proxy_redirect"},
	}
	for _, tc := range cases {
		t.Run(tc.fault, func(t *testing.T) {
			sid := w.session("px", "px-"+tc.fault)
			w.fp.set("px", tc.fault)
			start := time.Now()
			final, code, msg := ending(t, w.turn(sid, "hi "+tc.fault, 15*time.Second))
			if code != tc.code {
				t.Fatalf("ended with final %q / error %s %q; want %q", final, code, msg, tc.code)
			}
			if code == "" && final != proxytest.Answer("hi "+tc.fault) {
				t.Fatalf("final %q", final)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("the turn took %s", took)
			}
			w.fp.set("px", faultNone)
			if final, code, msg := ending(t, w.turn(sid, "after", 10*time.Second)); code != "" || final != proxytest.Answer("after") {
				t.Fatalf("next message after %s: %q %s %q", tc.fault, final, code, msg)
			}
		})
	}
	if n := w.fp.trapHits.Load(); n != 0 {
		t.Fatalf("a redirect was followed: the loopback trap was hit %d times", n)
	}
}

// TestRoundtableFaults: one of three round-table agents is faulty; the round
// table completes with the two others and the faulty one excluded with the
// fault's kind (or, for the slow but complete one-byte answer, included).
func TestRoundtableFaults(t *testing.T) {
	w := newWorld(t)
	cases := []struct {
		fault string
		kind  roundtable.ExclusionKind // "" means the agent took part
	}{
		{faultLatency, roundtable.ExcludedTimeout},
		{faultReset0, roundtable.ExcludedTransport},
		{faultResetMid, roundtable.ExcludedTransport},
		{faultByteWise, ""},
		{faultOversized, roundtable.ExcludedBodyTooLarge},
		{faultMalformed, roundtable.ExcludedInvalidResponse},
		{faultRedirLo, roundtable.ExcludedRedirect},
		{faultRedirMeta, roundtable.ExcludedRedirect},
	}
	for _, tc := range cases {
		t.Run(tc.fault, func(t *testing.T) {
			w.fp.set("faulty", tc.fault)
			var start api.StartRoundtableResponse
			if err := w.c.Do(context.Background(), "POST", "/v1/roundtables", api.StartRoundtableRequest{
				Content: "Review the login handler for security problems", Participants: []string{"good1", "good2", "faulty"}, TimeoutSeconds: 2}, &start); err != nil {
				t.Fatal(err)
			}
			run := w.waitRun(start.ID, 30*time.Second)
			if run.Status != "completed" {
				t.Fatalf("run %s status %s", run.ID, run.Status)
			}
			var res roundtable.Result
			if err := json.Unmarshal(run.Result, &res); err != nil {
				t.Fatal(err)
			}
			var analysts []string
			for _, a := range res.Analyses {
				analysts = append(analysts, a.AgentName)
			}
			var kinds []roundtable.ExclusionKind
			for _, x := range res.Exclusions {
				if x.Agent != "faulty" {
					t.Fatalf("a healthy agent was excluded: %+v", x)
				}
				if x.Phase == roundtable.PhaseAnalyze {
					kinds = append(kinds, x.Kind)
				}
			}
			if tc.kind == "" {
				if !slices.Contains(analysts, "faulty") || len(kinds) != 0 {
					t.Fatalf("the one-byte agent should take part: analysts %v exclusions %+v", analysts, res.Exclusions)
				}
			} else if !slices.Equal(kinds, []roundtable.ExclusionKind{tc.kind}) || slices.Contains(analysts, "faulty") {
				t.Fatalf("analyze exclusions of faulty %v, want [%s]; analysts %v", kinds, tc.kind, analysts)
			}
			if !slices.Contains(analysts, "good1") || !slices.Contains(analysts, "good2") || res.Tally.Approve < 2 {
				t.Fatalf("the healthy agents did not carry the round table: analysts %v tally %+v", analysts, res.Tally)
			}
		})
	}
	if n := w.fp.trapHits.Load(); n != 0 {
		t.Fatalf("a redirect was followed: the loopback trap was hit %d times", n)
	}
}

func (w *world) waitRun(id string, limit time.Duration) api.RoundtableRun {
	w.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var run api.RoundtableRun
		if err := w.c.Do(context.Background(), "GET", "/v1/roundtables/"+id, nil, &run); err != nil {
			w.t.Fatal(err)
		}
		if run.Status != "running" {
			return run
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("round table %s still running after %s", id, limit)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
