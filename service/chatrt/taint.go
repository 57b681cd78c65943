package chatrt

import (
	"context"

	"jarvis/api"
	"jarvis/service/prompt"
	"jarvis/service/provenance"
	"jarvis/service/turn"
)

// judgeMemory is the verdict of memory_search and memory_get on the line
// ranges they returned: the user's notes and what agents wrote from them
// are trusted; lines of an entry written after untrusted content (its mark,
// service/prompt) are not, nor lines whose file cannot be read back.
func (rt *Runtime) judgeMemory(ctx context.Context, hits []lineRange) {
	for _, h := range hits {
		rg, err := rt.opts.Memory.Get(ctx, h.path, 1, h.to)
		if err != nil || prompt.ExternalLines(rg.Text, h.from, h.to) {
			provenance.Judge(ctx, api.Untrusted, &api.Source{Kind: "memory", Detail: h.path})
			return
		}
	}
	provenance.Judge(ctx, api.Trusted, nil)
}

// lineRange is lines from..to of a memory file.
type lineRange struct {
	path     string
	from, to int
}

// judgeReply is the verdict of agents_message on a reply of agent target
// from turn tt: an agent outside the process is another principal, always
// untrusted, and so is a reply the injection scanner flags; an in-process
// chat agent's reply is as trusted as what its turn read (which includes
// what the caller's message carried).
func judgeReply(ctx context.Context, target string, inProcess bool, tt *turn.Turn, flagged bool) {
	switch {
	case !inProcess || tt == nil:
		provenance.Judge(ctx, api.Untrusted, &api.Source{Kind: "agent", Name: target})
		return
	case flagged:
		provenance.Judge(ctx, api.Untrusted, &api.Source{Kind: "agent", Name: target, Detail: "its reply reads like instructions"})
		return
	}
	read := tt.Taint.List()
	if len(read) == 0 {
		provenance.Judge(ctx, api.Trusted, nil)
		return
	}
	provenance.Judge(ctx, api.Untrusted, &api.Source{Kind: "agent", Name: target, Detail: "after " + api.Sources(read)})
}
