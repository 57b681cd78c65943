package chatrt

import (
	"context"
	"regexp"

	"jarvis/api"
	"jarvis/service/provenance"
	"jarvis/service/turn"
)

// externalEntry finds, in a memory tool's result, an entry written after
// untrusted content or whose turn is unknown (its mark, service/prompt),
// also inside a JSON string.
var externalEntry = regexp.MustCompile(`external=\\?"(yes|unknown)\\?"`)

// judgeMemory is the verdict of memory_search and memory_get: the user's
// notes and what agents wrote from them are trusted; an entry written after
// untrusted content is not.
func judgeMemory(ctx context.Context, result string) {
	if externalEntry.MatchString(result) {
		provenance.Judge(ctx, api.Untrusted, &api.Source{Kind: "memory"})
		return
	}
	provenance.Judge(ctx, api.Trusted, nil)
}

// judgeReply is the verdict of agents_message on a reply of agent target
// from turn tt: an agent outside the process is another principal, always
// untrusted, and so is a reply the injection scanner flags; an in-process
// chat agent's reply is as trusted as what its turn read, less the caller's
// own message that started it.
func judgeReply(ctx context.Context, target, caller string, inProcess bool, tt *turn.Turn, flagged bool) {
	switch {
	case !inProcess || tt == nil:
		provenance.Judge(ctx, api.Untrusted, &api.Source{Kind: "agent", Name: target})
		return
	case flagged:
		provenance.Judge(ctx, api.Untrusted, &api.Source{Kind: "agent", Name: target, Detail: "its reply reads like instructions"})
		return
	}
	var read []api.Source
	for _, s := range tt.Taint.List() {
		if s != (api.Source{Kind: "agent", Name: caller}) {
			read = append(read, s)
		}
	}
	if len(read) == 0 {
		provenance.Judge(ctx, api.Trusted, nil)
		return
	}
	provenance.Judge(ctx, api.Untrusted, &api.Source{Kind: "agent", Name: target, Detail: "after " + api.Sources(read)})
}
