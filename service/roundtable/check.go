package roundtable

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"
)

// IssueLevel says whether a deviation breaks the protocol (error: the
// platform would drop the response or the item) or weakens it (warning: the
// platform would flag, clamp or truncate).
type IssueLevel string

const (
	IssueError   IssueLevel = "error"
	IssueWarning IssueLevel = "warning"
)

// Issue is one deviation found by Check.
type Issue struct {
	Endpoint string     `json:"endpoint"` // "/analyze", "/challenge", "/vote", or "" for the agent as a whole
	Field    string     `json:"field"`    // JSON path, e.g. "observations[1].severity"; "" for the response itself
	Level    IssueLevel `json:"level"`
	Message  string     `json:"message"`
}

// EndpointReport is the outcome of calling one endpoint.
type EndpointReport struct {
	Endpoint  string  `json:"endpoint"`
	Status    int     `json:"status,omitempty"`
	LatencyMS float64 `json:"latency_ms"`
	// Error is set when no usable response came back at all.
	Error  string  `json:"error,omitempty"`
	Issues []Issue `json:"issues"`
}

// CheckReport is the outcome of Check.
type CheckReport struct {
	BaseURL   string           `json:"base_url"`
	AgentName string           `json:"agent_name,omitempty"`
	OK        bool             `json:"ok"` // no error-level issue anywhere
	Errors    int              `json:"errors"`
	Warnings  int              `json:"warnings"`
	Endpoints []EndpointReport `json:"endpoints"`
	// Issues concern the agent as a whole (authentication, naming).
	Issues []Issue `json:"issues"`
}

// Sample data sent by Check. The other analysis deliberately contains a
// weak observation so that a challenge is plausible.
const (
	checkTaskID   = "conformance-check"
	checkTask     = "Review this login handler for security problems: query := \"SELECT * FROM users WHERE name='\" + name + \"'\"; no rate limiting is applied."
	checkReviewer = "sample_reviewer"
)

func checkRequests() (AnalyzeRequest, ChallengeRequest, VoteRequest) {
	conf := func(f float64) *float64 { return &f }
	an := AnalyzeRequest{TaskID: checkTaskID, Content: checkTask,
		Context:     map[string]any{"source": "conformance_check"},
		Constraints: []string{"Must cite evidence"}}
	ch := ChallengeRequest{TaskID: checkTaskID, Content: checkTask, OtherAnalyses: []WireAnalysis{{
		AgentName: checkReviewer, Domain: "code quality",
		Observations: []WireObservation{
			{Finding: "The login handler is well-structured", Evidence: "Clean separation of concerns", Severity: "info", Confidence: conf(0.7)},
			{Finding: "SQL query built by string concatenation", Evidence: "[VERIFIED: task_content] name is concatenated into the query", Severity: "critical", Confidence: conf(0.95)},
		},
	}}}
	vo := VoteRequest{TaskID: checkTaskID, Content: checkTask, Synthesis: WireSynthesis{
		RecommendedDirection: "Use parameterized queries and add rate limiting before deployment",
		KeyFindings: []WireKeyFinding{{AgentName: checkReviewer, Finding: "SQL query built by string concatenation",
			Evidence: "[VERIFIED: task_content] name is concatenated into the query", Severity: "critical", EvidenceLevel: "verified"}},
		TradeOffs:     []string{"Rate limiting may slow legitimate bulk logins"},
		MinorityViews: []string{},
	}}
	return an, ch, vo
}

// Check calls an agent's three endpoints with sample requests and reports,
// field by field, where its responses break docs/protocols/roundtable-agents.md. client may be nil
// (NewSafeClient is used); its redirects are disabled either way. Each call
// is bounded by DefaultCallTimeout and by ctx. When apiKey is set, Check
// also makes one /vote call without it and warns if the agent accepts it.
func Check(ctx context.Context, client *http.Client, baseURL, apiKey string) CheckReport {
	rep := CheckReport{BaseURL: baseURL, Endpoints: []EndpointReport{}, Issues: []Issue{}}
	base, _, problem := checkBaseURL(baseURL)
	if problem != "" {
		rep.Issues = append(rep.Issues, Issue{Field: "base_url", Level: IssueError, Message: "base URL " + problem})
		rep.tally()
		return rep
	}
	rep.BaseURL = base
	if client == nil {
		client = NewSafeClient()
	} else {
		client = withoutRedirects(client)
	}
	call := caller{client: client, timeout: DefaultCallTimeout, maxBody: DefaultMaxBody}
	ck := &conformance{sc: newScanner(DefaultMaxField)}

	anReq, chReq, voReq := checkRequests()
	var names []string
	for _, ep := range []struct {
		path  string
		req   any
		check func(c *conformance, body []byte)
	}{
		{"/analyze", anReq, (*conformance).analyzeBody}, // the engine's own validator (validate.go)
		{"/challenge", chReq, objectCheck((*conformance).challenge)},
		{"/vote", voReq, objectCheck((*conformance).vote)},
	} {
		er := EndpointReport{Endpoint: ep.path, Issues: []Issue{}}
		res, fail := call.post(ctx, base, apiKey, ep.path, ep.req)
		er.Status, er.LatencyMS = res.status, ms(res.latency)
		if fail != nil {
			er.Error = fail.reason
			er.Issues = append(er.Issues, Issue{Endpoint: ep.path, Level: IssueError, Message: failureAdvice(fail, apiKey)})
			rep.Endpoints = append(rep.Endpoints, er)
			continue
		}
		ck.endpoint, ck.issues = ep.path, nil
		if ct, _, err := mime.ParseMediaType(res.contentType); err != nil || ct != "application/json" {
			ck.warn("", "Content-Type is %q, expected application/json", res.contentType)
		}
		if !utf8.Valid(res.body) {
			ck.warn("", "body is not valid UTF-8; the platform repairs it with U+FFFD")
		}
		if res.nulBytes > 0 {
			ck.warn("", "%s", nulWarning(res.nulBytes))
		}
		ep.check(ck, res.body)
		var named struct {
			AgentName any `json:"agent_name"`
		}
		json.Unmarshal(res.body, &named)
		if n, ok := named.AgentName.(string); ok && n != "" {
			names = append(names, n)
		}
		er.Issues = append(er.Issues, ck.issues...)
		rep.Endpoints = append(rep.Endpoints, er)
	}

	if len(names) > 0 {
		rep.AgentName = names[0]
		for _, n := range names[1:] {
			if n != names[0] {
				rep.Issues = append(rep.Issues, Issue{Field: "agent_name", Level: IssueWarning,
					Message: fmt.Sprintf("agent_name differs between endpoints (%q vs %q); the platform always uses the registered name", names[0], n)})
				break
			}
		}
	}
	if apiKey != "" {
		res, fail := call.post(ctx, base, "", "/vote", voReq)
		if fail == nil || (fail.kind != ExcludedHTTPError && fail.kind != ExcludedCancelled) {
			msg := "accepts /vote without an Authorization header; it should answer 401 when the key is missing"
			if fail != nil {
				msg = "without an Authorization header /vote did not answer 401/403: " + fail.reason
			}
			rep.Issues = append(rep.Issues, Issue{Endpoint: "/vote", Field: "Authorization", Level: IssueWarning, Message: msg})
		} else if res.status != http.StatusUnauthorized && res.status != http.StatusForbidden {
			rep.Issues = append(rep.Issues, Issue{Endpoint: "/vote", Field: "Authorization", Level: IssueWarning,
				Message: fmt.Sprintf("without an Authorization header /vote answered %d; 401 is expected", res.status)})
		}
	}
	rep.tally()
	return rep
}

func failureAdvice(f *callFailure, apiKey string) string {
	msg := f.reason
	switch {
	case (f.status == http.StatusUnauthorized || f.status == http.StatusForbidden) && apiKey == "":
		msg += " (the agent demands a key: pass the API key it was registered with)"
	case f.status == http.StatusUnauthorized || f.status == http.StatusForbidden:
		msg += " (the agent refused the key given: it must accept \"Authorization: Bearer <key>\")"
	case f.status == http.StatusNotFound || f.status == http.StatusMethodNotAllowed:
		msg += " (the endpoint must accept POST at this path)"
	}
	return "no usable response: " + msg
}

func (r *CheckReport) tally() {
	count := func(is []Issue) {
		for _, i := range is {
			if i.Level == IssueError {
				r.Errors++
			} else {
				r.Warnings++
			}
		}
	}
	count(r.Issues)
	for _, e := range r.Endpoints {
		count(e.Issues)
	}
	r.OK = r.Errors == 0
}

// String renders the report for a terminal.
func (r CheckReport) String() string {
	var b strings.Builder
	verdict := "PASS"
	if !r.OK {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "Conformance check of %s: %s (%d error(s), %d warning(s))\n", r.BaseURL, verdict, r.Errors, r.Warnings)
	if r.AgentName != "" {
		fmt.Fprintf(&b, "Agent name: %s\n", termSafe(r.AgentName))
	}
	writeIssues := func(is []Issue) {
		for _, i := range is {
			level := "ERROR"
			if i.Level == IssueWarning {
				level = "WARN "
			}
			field := i.Field
			if field == "" {
				field = "(response)"
			}
			fmt.Fprintf(&b, "    %s  %s: %s\n", level, termSafe(field), termSafe(i.Message))
		}
	}
	for _, e := range r.Endpoints {
		status := "—"
		if e.Status != 0 {
			status = fmt.Sprint(e.Status)
		}
		state := "ok"
		if len(e.Issues) > 0 {
			state = fmt.Sprintf("%d issue(s)", len(e.Issues))
		}
		fmt.Fprintf(&b, "\n  POST %-11s status %s  %.0f ms  %s\n", e.Endpoint, status, e.LatencyMS, state)
		writeIssues(e.Issues)
	}
	if len(r.Issues) > 0 {
		b.WriteString("\n  Agent as a whole\n")
		writeIssues(r.Issues)
	}
	return b.String()
}

// termSafe keeps agent-controlled text from driving the terminal (escape
// sequences) or spanning lines.
func termSafe(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	return truncateForMessage(s, 300)
}

// conformance accumulates issues for one endpoint. brief skips the
// warning-only work (injection scan, evidence tags, unknown fields): the
// engine needs only the errors (validateAnalysis).
type conformance struct {
	sc       *scanner
	endpoint string
	brief    bool
	issues   []Issue
}

func (c *conformance) add(level IssueLevel, field, format string, args ...any) {
	c.issues = append(c.issues, Issue{Endpoint: c.endpoint, Field: field, Level: level, Message: fmt.Sprintf(format, args...)})
}
func (c *conformance) err(field, format string, args ...any) {
	c.add(IssueError, field, format, args...)
}
func (c *conformance) warn(field, format string, args ...any) {
	if c.brief {
		return
	}
	c.add(IssueWarning, field, format, args...)
}

// objectCheck checks a body that must be a JSON object with check.
func objectCheck(check func(c *conformance, obj map[string]any)) func(c *conformance, body []byte) {
	return func(c *conformance, body []byte) {
		if obj, ok := c.object(body); ok {
			check(c, obj)
		}
	}
}

func (c *conformance) object(body []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		c.err("", "body is not valid JSON: %v (the platform excludes the agent from this phase)", err)
		return nil, false
	}
	if dec.More() {
		c.err("", "body has data after the JSON value (the platform excludes the agent from this phase)")
		return nil, false
	}
	obj, ok := v.(map[string]any)
	if !ok {
		c.err("", "body is a JSON %s, expected an object (the platform excludes the agent from this phase)", jsonType(v))
		return nil, false
	}
	return obj, true
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// unknown warns about fields the protocol does not define.
func (c *conformance) unknown(obj map[string]any, path string, known ...string) {
	if c.brief {
		return
	}
	var extra []string
	for k := range obj {
		if !slices.Contains(known, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	for _, k := range extra {
		c.warn(join(path, k), "unknown field, ignored by the platform")
	}
}

// str checks a string field; nonEmpty also refuses "".
func (c *conformance) str(obj map[string]any, path, key string, required, nonEmpty bool) (string, bool) {
	field := join(path, key)
	v, present := obj[key]
	switch {
	case !present && required:
		c.err(field, "required field is missing")
		return "", false
	case !present:
		return "", false
	case v == nil && required:
		c.err(field, "required field is null")
		return "", false
	case v == nil:
		return "", false
	}
	s, ok := v.(string)
	if !ok {
		c.err(field, "must be a string, got %s", jsonType(v))
		return "", false
	}
	if nonEmpty && strings.TrimSpace(s) == "" {
		c.err(field, "must not be empty")
	}
	if c.brief {
		return s, true
	}
	if n := utf8.RuneCountInString(s); n > DefaultMaxField {
		c.warn(field, "is %d characters; the platform truncates it to %d", n, DefaultMaxField)
	}
	if strings.ContainsRune(s, 0) {
		c.warn(field, "contains NUL bytes; the platform strips them")
	}
	if _, rep := c.sc.scan(s); len(rep.patterns) > 0 {
		names := make([]string, len(rep.patterns))
		for i, p := range rep.patterns {
			names[i] = p.Pattern + " (" + p.Via + ")"
		}
		c.warn(field, "matches prompt-injection patterns %s; the platform flags the response", strings.Join(names, ", "))
	} else if slices.Contains(rep.flags, FlagHiddenCharacters) {
		c.warn(field, "contains zero-width or invisible characters; the platform flags them")
	}
	return s, true
}

func (c *conformance) num01(obj map[string]any, path, key string, required bool) {
	field := join(path, key)
	v, present := obj[key]
	if !present || v == nil {
		if required {
			c.err(field, "required field is missing")
		}
		return
	}
	n, ok := v.(json.Number)
	if !ok {
		c.err(field, "must be a number, got %s", jsonType(v))
		return
	}
	f, err := n.Float64()
	if err != nil {
		c.err(field, "is not a usable number: %v", err)
		return
	}
	if f < 0 || f > 1 {
		c.warn(field, "%s is out of range: must be between 0.0 and 1.0 (the platform clamps it and flags it)", n)
	}
}

func (c *conformance) array(obj map[string]any, path, key string, required bool) ([]any, bool) {
	field := join(path, key)
	v, present := obj[key]
	if !present || v == nil {
		if required {
			c.err(field, "required field is missing")
		}
		return nil, false
	}
	a, ok := v.([]any)
	if !ok {
		c.err(field, "must be an array, got %s", jsonType(v))
		return nil, false
	}
	if len(a) > DefaultMaxItems {
		c.warn(field, "has %d items; the platform keeps the first %d", len(a), DefaultMaxItems)
	}
	return a, true
}

func (c *conformance) items(arr []any, field string, each func(obj map[string]any, path string)) {
	for i, it := range arr {
		path := fmt.Sprintf("%s[%d]", field, i)
		obj, ok := it.(map[string]any)
		if !ok {
			c.err(path, "must be an object, got %s (the platform drops it)", jsonType(it))
			continue
		}
		each(obj, path)
	}
}

func (c *conformance) analyze(obj map[string]any) {
	c.unknown(obj, "", "agent_name", "domain", "observations", "recommendations", "confidence")
	c.str(obj, "", "agent_name", true, true)
	c.str(obj, "", "domain", true, false)
	c.num01(obj, "", "confidence", false)
	if obs, ok := c.array(obj, "", "observations", true); ok {
		if len(obs) == 0 {
			c.warn("observations", "is empty; the agent contributes no finding")
		}
		c.items(obs, "observations", func(o map[string]any, path string) {
			c.unknown(o, path, "finding", "evidence", "severity", "confidence")
			finding, _ := c.str(o, path, "finding", true, true)
			if ev, ok := c.str(o, path, "evidence", true, true); ok && ev != "" && !c.brief {
				info := c.sc.parseEvidence(ev)
				switch {
				case slices.Contains(info.flags, FlagNoEvidenceLevel):
					c.warn(join(path, "evidence"), "has no evidence level; start it with [VERIFIED: source], [CORROBORATED: a + b], [INDICATED: source] or [POSSIBLE] (the finding is weighted down)")
				case slices.Contains(info.flags, FlagMalformedEvidence):
					c.warn(join(path, "evidence"), "evidence tag lacks its source (CORROBORATED needs two, joined by '+'); it is weighted down")
				}
				if c.sc.speculative(finding, ev) {
					c.warn(path, "uses speculative wording (might, possibly, I think, could be...); the finding is flagged and weighted down")
				}
			}
			if sev, ok := c.str(o, path, "severity", true, true); ok && sev != "" {
				switch Severity(strings.ToLower(strings.TrimSpace(sev))) {
				case SeverityCritical, SeverityWarning, SeverityInfo:
				default:
					c.warn(join(path, "severity"), "unknown severity %q: must be critical, warning or info (the platform treats it as info and flags it)", sev)
				}
			}
			c.num01(o, path, "confidence", false)
		})
	}
	if recs, ok := c.array(obj, "", "recommendations", false); ok {
		c.items(recs, "recommendations", func(o map[string]any, path string) {
			c.unknown(o, path, "action", "rationale", "priority")
			c.str(o, path, "action", true, true)
			c.str(o, path, "rationale", false, false)
			c.str(o, path, "priority", false, false)
		})
	}
}

func (c *conformance) challenge(obj map[string]any) {
	c.unknown(obj, "", "agent_name", "challenges", "concessions")
	c.str(obj, "", "agent_name", true, true)
	target := func(o map[string]any, path string) {
		if t, ok := c.str(o, path, "target_agent", true, true); ok && t != "" && t != checkReviewer {
			c.warn(join(path, "target_agent"), "%q is not an agent of other_analyses (%q); the platform cannot match it", t, checkReviewer)
		}
	}
	if chs, ok := c.array(obj, "", "challenges", false); ok {
		c.items(chs, "challenges", func(o map[string]any, path string) {
			c.unknown(o, path, "target_agent", "finding_challenged", "counter_evidence")
			target(o, path)
			c.str(o, path, "finding_challenged", true, true)
			c.str(o, path, "counter_evidence", true, true)
		})
	}
	if cos, ok := c.array(obj, "", "concessions", false); ok {
		c.items(cos, "concessions", func(o map[string]any, path string) {
			c.unknown(o, path, "target_agent", "finding_accepted", "reason")
			target(o, path)
			c.str(o, path, "finding_accepted", true, true)
			c.str(o, path, "reason", true, true)
		})
	}
}

func (c *conformance) vote(obj map[string]any) {
	c.unknown(obj, "", "agent_name", "approve", "conditions", "dissent_reason")
	c.str(obj, "", "agent_name", true, true)
	approve, hasApprove := true, false
	switch v, present := obj["approve"]; {
	case !present || v == nil:
		c.err("approve", "required field is missing (the platform excludes the vote)")
	default:
		b, ok := v.(bool)
		if !ok {
			c.err("approve", "must be a boolean, got %s (the platform excludes the vote)", jsonType(v))
		} else {
			approve, hasApprove = b, true
		}
	}
	if conds, ok := c.array(obj, "", "conditions", false); ok {
		for i, it := range conds {
			if _, ok := it.(string); !ok {
				c.err(fmt.Sprintf("conditions[%d]", i), "must be a string, got %s", jsonType(it))
			}
		}
	}
	reason, _ := c.str(obj, "", "dissent_reason", false, false)
	if hasApprove && !approve && strings.TrimSpace(reason) == "" {
		c.err("dissent_reason", "is required when approve is false")
	}
}
