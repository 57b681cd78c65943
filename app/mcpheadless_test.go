package app

import (
	"strings"
	"testing"

	"jarvis/app/audit"
)

// TestMCPEverythingHeadless: `jarvis --headless` (the runner without a
// window) drives server-everything's features through the same gate as
// the window: each tool a rule allows runs (a tool that requires an MCP
// task returns its report, a resource is read through the gated
// read_resource tool, an image reaches the model), and what needs a person
// is declined and recorded as the headless gate's: the server's question
// (elicitation). Each call is its own conversation, so no untrusted result
// of one taints the next. (Sampling headless: TestMCPSamplingHeadless.)
func TestMCPEverythingHeadless(t *testing.T) {
	tools := []string{researchTool, "mcp__every__read_resource", "mcp__every__trigger-elicitation-request", "mcp__every__get-tiny-image"}
	var rules []string
	for _, tl := range tools {
		rules = append(rules, `{"tool":"`+tl+`","action":"allow"}`)
	}
	d := everythingDesktop(t, `{"rules":[`+strings.Join(rules, ",")+`]}`, func(o *ToolRunnerOptions) { o.Headless = true })
	for _, c := range []struct{ tool, args, want string }{
		{researchTool, `{"topic":"tides"}`, "Research Report: tides"},
		{"mcp__every__read_resource", `{"uri":"demo://resource/dynamic/text/7"}`, "Resource 7"},
		{"mcp__every__trigger-elicitation-request", `{}`, "declined"},
		{"mcp__every__get-tiny-image", `{}`, "attached]"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			waitTool(t, d.runner.mcp, c.tool)
			sid := d.session(t)
			if err := d.app.Send(sid, `[[tool `+c.tool+` `+c.args+`]]`); err != nil {
				t.Fatal(err)
			}
			d.finalText(t, sid, c.want)
			if e := d.auditRow(t, sid, c.tool); e.Decision != audit.Allowed || e.DecidedBy != audit.ByPolicy {
				t.Fatalf("audit row %+v", e)
			}
		})
	}
	// The image went to the model as an image.
	reqs := d.model.Requests()
	if urls, _ := imageParts(reqs[len(reqs)-1]); len(urls) != 1 {
		t.Fatalf("the model's last request carries %d images", len(urls))
	}
}
