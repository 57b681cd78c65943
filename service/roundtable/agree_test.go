package roundtable

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"jarvis/service/textclean"
)

// analyzeCorpus is /analyze responses, good and bad, that the checker and
// the engine must judge alike.
var analyzeCorpus = map[string]string{
	"good":                    `{"agent_name":"x","domain":"d","confidence":0.8,"observations":[{"finding":"f","evidence":"[INDICATED: t] e","severity":"info","confidence":0.5}],"recommendations":[{"action":"a","rationale":"r","priority":"high"}]}`,
	"empty observations":      `{"agent_name":"x","domain":"d","observations":[]}`,
	"no observations":         `{"agent_name":"x","domain":"d"}`,
	"observations null":       `{"agent_name":"x","domain":"d","observations":null}`,
	"observations an object":  `{"agent_name":"x","domain":"d","observations":{}}`,
	"no domain":               `{"agent_name":"x","observations":[]}`,
	"no agent_name":           `{"domain":"d","observations":[]}`,
	"agent_name a number":     `{"agent_name":7,"domain":"d","observations":[]}`,
	"confidence a string":     `{"agent_name":"x","domain":"d","observations":[],"confidence":"high"}`,
	"confidence out of range": `{"agent_name":"x","domain":"d","observations":[{"finding":"f","evidence":"[POSSIBLE] e","severity":"info","confidence":1.7}],"confidence":-1}`,
	"unknown severity":        `{"agent_name":"x","domain":"d","observations":[{"finding":"f","evidence":"[POSSIBLE] e","severity":"HIGH"}]}`,
	"items broken": `{"agent_name":"x","domain":"d","observations":[
		{"finding":"kept","evidence":"[POSSIBLE] e","severity":"warning"},
		{"evidence":"[POSSIBLE] e","severity":"info"},
		{"finding":"no evidence","severity":"info"},
		{"finding":"no severity","evidence":"[POSSIBLE] e"},
		{"finding":"confidence a string","evidence":"[POSSIBLE] e","severity":"info","confidence":"0.5"},
		"a string", 7, null,
		{"finding":"","evidence":"[POSSIBLE] e","severity":"info"}],
		"recommendations":[{"action":"kept"},{"rationale":"no action"},{"action":""},3]}`,
	"raw NUL in a string":     "{\"agent_name\":\"x\",\"domain\":\"d\x00\",\"observations\":[{\"finding\":\"f\x00\",\"evidence\":\"[POSSIBLE] e\",\"severity\":\"info\"}]}",
	"escaped NUL in a string": `{"agent_name":"x","domain":"d\u0000","observations":[{"finding":"f\u0000","evidence":"[POSSIBLE] e","severity":"info"}]}`,
	"not JSON":                `{"agent_name":"x",`,
	"an array":                `[]`,
	"trailing data":           `{"agent_name":"x","domain":"d","observations":[]} {}`,
	"empty body":              ``,
}

// TestCheckerAndEngineAgreeOnAnalyze: every response of the corpus goes
// through agent-check (Check) and through a real deliberation (Run). A
// response the checker finds an error in as a whole is refused by the
// engine, and one it accepts is used; each list item the checker finds an
// error in is dropped by the engine, and every other item is kept. (The
// engine used to accept an analysis without observations, domain or
// agent_name that the checker refused.)
func TestCheckerAndEngineAgreeOnAnalyze(t *testing.T) {
	eng := newEngine(t, Options{})
	for name, body := range analyzeCorpus {
		t.Run(name, func(t *testing.T) {
			url := breakingAgent(t, map[string]string{"/analyze": body}, false)

			rep := Check(ctxT(t), nil, url, "")
			var anIssues []Issue
			for _, e := range rep.Endpoints {
				if e.Endpoint == "/analyze" {
					anIssues = e.Issues
				}
			}
			refused, dropped := false, map[string]bool{}
			for _, is := range anIssues {
				if is.Level != IssueError {
					continue
				}
				if i := strings.IndexByte(is.Field, ']'); i > 0 {
					dropped[is.Field[:i+1]] = true
				} else {
					refused = true
				}
			}

			res, err := eng.Run(ctxT(t), Task{ID: "agree", Content: "Review it"}, []Agent{{Name: "x", Domain: "d", BaseURL: url}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			engineRefused := exclusionsOf(res, "x")[PhaseAnalyze].Kind == ExcludedInvalidResponse
			if refused != engineRefused {
				t.Fatalf("checker refuses: %v, engine refuses: %v (exclusions %+v)\nchecker:\n%s", refused, engineRefused, res.Exclusions, rep)
			}
			if strings.Contains(name, "NUL") && refused {
				t.Fatalf("NUL bytes made the response refused instead of stripped:\n%s", rep)
			}
			if refused {
				return
			}
			if len(res.Analyses) != 1 {
				t.Fatalf("the engine did not use the accepted analysis: %+v", res)
			}
			an := res.Analyses[0]
			var w struct {
				Observations    []json.RawMessage `json:"observations"`
				Recommendations []json.RawMessage `json:"recommendations"`
			}
			json.Unmarshal(stripped(body), &w)
			for list, got := range map[string]int{"observations": len(an.Observations), "recommendations": len(an.Recommendations)} {
				total := len(w.Observations)
				if list == "recommendations" {
					total = len(w.Recommendations)
				}
				want := total
				for i := 0; i < total; i++ {
					if dropped[fmt.Sprintf("%s[%d]", list, i)] {
						want--
					}
				}
				if got != want {
					t.Fatalf("%s: the engine kept %d of %d, the checker drops %d\nchecker:\n%s", list, got, total, total-want, rep)
				}
			}
			if strings.Contains(name, "NUL") {
				if !strings.Contains(fmt.Sprint(an.Flags, an.Observations[0].Flags), FlagNULStripped) || strings.ContainsRune(an.Domain+an.Observations[0].Finding, 0) {
					t.Fatalf("NULs not stripped and flagged: %+v", an)
				}
			}
		})
	}
}

func stripped(s string) []byte { b, _ := textclean.StripNUL([]byte(s)); return b }
