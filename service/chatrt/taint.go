package chatrt

import (
	"encoding/json"
	"regexp"

	"jarvis/api"
)

// externalEntry finds, in a memory tool's result, an entry written after
// untrusted content or whose turn is unknown (its mark, service/prompt),
// also inside a JSON string.
var externalEntry = regexp.MustCompile(`external=\\?"(yes|unknown)\\?"`)

// serverTrust judges the result of a tool the service runs itself
// (service/provenance): memory_write's confirmation and memory the user's
// own turns wrote are trusted; memory entries written after untrusted
// content, another agent's reply and a round table's answers are not, nor
// the result of any other service tool (fail closed).
func serverTrust(name string, args json.RawMessage, result string) (trust string, origin *api.Source) {
	switch name {
	case memoryWriteTool:
		return api.Trusted, nil
	case "memory_search", "memory_get":
		if externalEntry.MatchString(result) {
			return api.Untrusted, &api.Source{Kind: "memory"}
		}
		return api.Trusted, nil
	case agentsMessageTool:
		var a struct {
			AgentID string `json:"agentId"`
		}
		if json.Unmarshal(args, &a) != nil {
			a.AgentID = "(unnamed)" // a malformed call never ran; its error is not judged
		}
		return api.Untrusted, &api.Source{Kind: "agent", Name: a.AgentID}
	case "round_table":
		return api.Untrusted, &api.Source{Kind: "agent", Name: "round table"}
	}
	return api.Untrusted, &api.Source{Kind: "tool", Name: name}
}
