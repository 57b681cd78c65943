package main

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Wire types, copied from docs/protocols/roundtable-agents.md so that this example stands alone.

type analyzeRequest struct {
	TaskID      string         `json:"task_id"`
	Content     string         `json:"content"`
	Context     map[string]any `json:"context,omitempty"`
	Constraints []string       `json:"constraints,omitempty"`
}

type observation struct {
	Finding    string   `json:"finding"`
	Evidence   string   `json:"evidence"`
	Severity   string   `json:"severity"`
	Confidence float64  `json:"confidence"`
	Flags      []string `json:"flags,omitempty"` // set by the platform on other agents' findings
}

type recommendation struct {
	Action    string `json:"action"`
	Rationale string `json:"rationale"`
	Priority  string `json:"priority"`
}

type analysis struct {
	AgentName       string           `json:"agent_name"`
	Domain          string           `json:"domain"`
	Observations    []observation    `json:"observations"`
	Recommendations []recommendation `json:"recommendations"`
	Confidence      float64          `json:"confidence"`
}

type challengeRequest struct {
	TaskID        string     `json:"task_id"`
	Content       string     `json:"content"`
	OtherAnalyses []analysis `json:"other_analyses"`
}

type challenge struct {
	TargetAgent       string `json:"target_agent"`
	FindingChallenged string `json:"finding_challenged"`
	CounterEvidence   string `json:"counter_evidence"`
}

type concession struct {
	TargetAgent     string `json:"target_agent"`
	FindingAccepted string `json:"finding_accepted"`
	Reason          string `json:"reason"`
}

type challengeResponse struct {
	AgentName   string       `json:"agent_name"`
	Challenges  []challenge  `json:"challenges"`
	Concessions []concession `json:"concessions"`
}

type voteRequest struct {
	TaskID    string `json:"task_id"`
	Content   string `json:"content"`
	Synthesis struct {
		RecommendedDirection string `json:"recommended_direction"`
		KeyFindings          []struct {
			AgentName string `json:"agent_name"`
			Finding   string `json:"finding"`
			Evidence  string `json:"evidence"`
			Severity  string `json:"severity"`
		} `json:"key_findings"`
		TradeOffs     []string `json:"trade_offs"`
		MinorityViews []string `json:"minority_views"`
	} `json:"synthesis"`
}

type voteResponse struct {
	AgentName     string   `json:"agent_name"`
	Approve       bool     `json:"approve"`
	Conditions    []string `json:"conditions"`
	DissentReason *string  `json:"dissent_reason"`
}

// agent holds configuration only; handlers are safe for concurrent use.
type agent struct {
	name, domain, apiKey string
	delay                time.Duration
	log                  *slog.Logger
}

// maxRequest bounds a request body: /challenge carries every other
// agent's analysis, so it is larger than the platform's 5 MB response cap.
const maxRequest = 32 << 20

// httpError is an error with the status to answer.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func (a *agent) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /analyze", a.handle(a.analyze))
	mux.Handle("POST /challenge", a.handle(a.challenge))
	mux.Handle("POST /vote", a.handle(a.vote))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	return mux
}

// handle is the one adapter: authentication, body cap, decoding, the
// optional delay, error mapping and encoding.
func (a *agent) handle(fn func(body []byte) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.apiKey != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(a.apiKey)) != 1 {
				writeError(w, http.StatusUnauthorized, "missing or wrong API key")
				return
			}
		}
		var body json.RawMessage
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxRequest)).Decode(&body); err != nil {
			writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
			return
		}
		if a.delay > 0 {
			select {
			case <-time.After(a.delay):
			case <-r.Context().Done():
				return
			}
		}
		out, err := fn(body)
		if err != nil {
			var he *httpError
			if errors.As(err, &he) {
				writeError(w, he.status, he.msg)
				return
			}
			a.log.Error("handler failed", "path", r.URL.Path, "error", err)
			writeError(w, http.StatusInternalServerError, "internal error")
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client may have gone; nothing to do
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"code": http.StatusText(status), "message": msg}})
}

func badRequest(format string, args ...any) error {
	return &httpError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// rule is one thing the agent knows how to spot in a task.
type rule struct {
	any      []string // the task mentions one of these...
	all      []string // ...and all of these
	finding  string
	evidence string
	severity string
	conf     float64
	rec      recommendation
}

func rules() []rule {
	return []rule{
		{any: []string{"select ", "insert ", "update ", "delete "}, all: []string{"+"},
			finding: "SQL query assembled by string concatenation", severity: "critical", conf: 0.9,
			evidence: "[INDICATED: task_content] the task shows a SQL statement joined with '+' to a variable",
			rec:      recommendation{"Use parameterized queries for all SQL operations", "Concatenated input allows SQL injection (OWASP A03:2021)", "critical"}},
		{any: []string{"no rate limit", "without rate limit", "rate limiting is not", "no rate-limit"},
			finding: "No rate limiting on the described endpoint", severity: "warning", conf: 0.8,
			evidence: "[INDICATED: task_content] the task states that no rate limiting is applied",
			rec:      recommendation{"Add rate limiting to authentication endpoints", "Slows credential stuffing and brute force", "warning"}},
		{any: []string{"md5", "sha1", "plaintext password", "plain text password"},
			finding: "Weak or no password hashing", severity: "critical", conf: 0.85,
			evidence: "[INDICATED: task_content] the task names a fast or absent password hash",
			rec:      recommendation{"Hash passwords with a slow KDF such as bcrypt, scrypt or argon2id", "Fast hashes are brute-forced offline", "critical"}},
		{any: []string{"eval(", "exec(", "os.system(", "shell=true"},
			finding: "Dynamic code or shell execution", severity: "critical", conf: 0.8,
			evidence: "[INDICATED: task_content] the task contains an eval/exec style call",
			rec:      recommendation{"Remove dynamic evaluation or strictly allowlist its input", "Dynamic execution of input leads to remote code execution", "critical"}},
		{any: []string{"http://"},
			finding: "Cleartext HTTP URL", severity: "warning", conf: 0.7,
			evidence: "[INDICATED: task_content] the task references an http:// URL",
			rec:      recommendation{"Serve and call the endpoint over HTTPS", "Cleartext traffic can be read and altered in transit", "warning"}},
		{any: []string{"todo", "fixme"},
			finding: "Unfinished work markers (TODO/FIXME)", severity: "info", conf: 0.6,
			evidence: "[INDICATED: task_content] the task contains TODO or FIXME",
			rec:      recommendation{"Resolve or ticket the TODO/FIXME markers", "Markers often hide missing checks", "info"}},
	}
}

func (a *agent) analyze(body []byte) (any, error) {
	var req analyzeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("invalid analyze request: %v", err)
	}
	if strings.TrimSpace(req.Content) == "" {
		return nil, badRequest("content is required")
	}
	lower := strings.ToLower(req.Content)
	out := analysis{AgentName: a.name, Domain: a.domain, Observations: []observation{}, Recommendations: []recommendation{}}
	for _, r := range rules() {
		if matches(lower, r) {
			out.Observations = append(out.Observations, observation{Finding: r.finding, Evidence: r.evidence, Severity: r.severity, Confidence: r.conf})
			out.Recommendations = append(out.Recommendations, r.rec)
		}
	}
	out.Observations = append(out.Observations, observation{
		Finding:    fmt.Sprintf("Scope reviewed by %s: %s", a.domain, excerpt(req.Content, 100)),
		Evidence:   fmt.Sprintf("[INDICATED: task_content] %d characters of task text were reviewed", utf8.RuneCountInString(req.Content)),
		Severity:   "info",
		Confidence: 0.5,
	})
	out.Confidence = 0.5
	if len(out.Observations) > 1 {
		out.Confidence = 0.75
	}
	return out, nil
}

func matches(lower string, r rule) bool {
	for _, s := range r.all {
		if !strings.Contains(lower, s) {
			return false
		}
	}
	for _, s := range r.any {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

func (a *agent) challenge(body []byte) (any, error) {
	var req challengeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("invalid challenge request: %v", err)
	}
	out := challengeResponse{AgentName: a.name, Challenges: []challenge{}, Concessions: []concession{}}
	for _, other := range req.OtherAnalyses {
		if other.AgentName == a.name {
			continue
		}
		for _, o := range other.Observations {
			ev := strings.ToUpper(o.Evidence)
			switch {
			case slices.Contains(o.Flags, "prompt_injection"):
				out.Challenges = append(out.Challenges, challenge{other.AgentName, o.Finding,
					"The platform flagged this finding as a prompt-injection attempt; it should not be acted on without independent evidence"})
			case !strings.Contains(ev, "[VERIFIED") && !strings.Contains(ev, "[CORROBORATED") &&
				!strings.Contains(ev, "[INDICATED") && !strings.Contains(ev, "[POSSIBLE"):
				out.Challenges = append(out.Challenges, challenge{other.AgentName, o.Finding,
					"The evidence carries no evidence level or source, so the claim cannot be checked against the task"})
			case strings.Contains(ev, "[VERIFIED") || strings.Contains(ev, "[CORROBORATED"):
				out.Concessions = append(out.Concessions, concession{other.AgentName, o.Finding,
					"The evidence is tagged and cites a source that can be checked"})
			}
		}
	}
	return out, nil
}

func (a *agent) vote(body []byte) (any, error) {
	var req voteRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("invalid vote request: %v", err)
	}
	out := voteResponse{AgentName: a.name, Approve: true, Conditions: []string{}}
	if strings.TrimSpace(req.Synthesis.RecommendedDirection) == "" {
		reason := "The synthesis gives no recommended direction to act on"
		out.Approve, out.DissentReason = false, &reason
		return out, nil
	}
	for _, k := range req.Synthesis.KeyFindings {
		if k.Severity == "critical" && len(out.Conditions) < 3 {
			out.Conditions = append(out.Conditions, "Fix before release: "+excerpt(k.Finding, 200))
		}
	}
	return out, nil
}

func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
