package gate

import (
	"encoding/json"
	"net/url"

	"jarvis/api"
	"jarvis/app/audit"
	"jarvis/tools"
)

// Untrusted content and outbound calls. An agent is dangerous when three
// things meet in one turn: private data, text someone else wrote, and a way
// to send data out. The service names the untrusted sources of the model's
// context on each call (Request.Untrusted, service/provenance); a call that
// can send data out of the machine or to another principal (outbound) then
// asks the user even when a rule or a session grant would allow it, unless
// the rule says it holds with untrusted content (Rule.Untrusted). Headless,
// that ask is a denial.

// outbound reports whether a call can send data out of the machine or to
// another principal, and where to, in words:
//   - open_url with a query or a fragment (data in the address);
//   - clipboard_write (what is pasted next, anywhere);
//   - run_command with network;
//   - a service tool that sends data out (agents_message to an external,
//     proxy, round-table or CLI agent; round_table): Request.Target;
//   - a tool whose definition says it reaches the outside (MCP tools of
//     remote servers, or marked openWorldHint: tools.Definition.Outbound).
func outbound(req Request, def tools.Definition, args map[string]json.RawMessage) (dest string, ok bool) {
	switch {
	case req.Target != "":
		return req.Target, true
	case def.Outbound != "":
		return def.Outbound, true
	}
	switch req.Name {
	case "open_url":
		u, err := url.Parse(argValue(args, "url"))
		if err != nil {
			return "an address that does not parse", true
		}
		if u.RawQuery != "" || u.Fragment != "" {
			return "the site " + u.Host + " (data in the address)", true
		}
	case "clipboard_write":
		return "the clipboard (pasted anywhere next)", true
	case "run_command":
		if callNetwork(args) {
			return "the network (the command may connect anywhere)", true
		}
	}
	return "", false
}

// untrustedRule applies the taint to d: every call made with untrusted
// content in the context says so in its reason; an outbound one that a rule
// or a grant would run asks instead, unless the rule holds with untrusted
// content.
func untrustedRule(req Request, def tools.Definition, args map[string]json.RawMessage, d *Decision) {
	if len(req.Untrusted) == 0 {
		return
	}
	d.Untrusted = req.Untrusted
	d.Reason += "; after untrusted content from " + api.Sources(req.Untrusted)
	dest, ok := outbound(req, def, args)
	if !ok || d.Action != Run {
		return
	}
	d.Destination = dest
	if d.Rule != nil && d.Rule.Action == Allow && d.Rule.Untrusted && d.DecidedBy == audit.ByPolicy {
		d.Reason += "; the rule holds with untrusted content"
		return
	}
	d.Action, d.DecidedBy, d.Tainted = AskUser, audit.ByPolicy, true
	d.Reason += "; it would send data to " + dest + ", so it asks even where a rule allows it"
}
