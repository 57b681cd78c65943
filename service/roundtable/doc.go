// Package roundtable owns the round-table deliberation engine of docs/protocols/roundtable-agents.md:
// validating agent registrations, choosing participants, calling each agent's
// /analyze, /challenge and /vote endpoints, sanitising everything the agents
// return, building a synthesis and producing a Result that can be stored and
// returned as JSON as is. It also owns the conformance checker (Check) that
// tells an agent author where their responses break the protocol, and
// RenderMarkdown, the reply of a "roundtable" agent.
//
// The engine treats every agent as untrusted. Each call carries a timeout, a
// response-size cap and a per-field length cap; redirects are never followed
// and the default HTTP client refuses, after DNS resolution, to dial
// link-local and cloud-metadata addresses. Text coming back from an agent is
// stripped of NUL and control bytes, repaired to valid UTF-8, cut at a rune
// boundary, scanned for prompt-injection patterns (flagged, never filtered)
// and run through evidence enforcement. A failing agent is excluded from the
// phase with a recorded reason; a deliberation never fails because an agent
// did.
//
// Storage, HTTP routes, the keyring and event streaming belong to the
// caller: the engine reports progress through a callback and returns values.
//
// # Concurrency
//
// An *Engine is immutable after New and safe for concurrent use; several
// Run calls may proceed at once. Within a Run, the agents of a phase are
// called in parallel (bounded by Options.MaxConcurrency) and the phases run
// in sequence. The progress callback is never called concurrently for one
// Run (calls are serialised), but it is called from the engine's goroutines
// and delays the deliberation while it runs, so it must be quick and must
// not panic. Synthesizer implementations must be safe for concurrent use if
// the Engine is shared. ValidateRegistration, SelectParticipants,
// RenderMarkdown and Check hold no shared state.
//
// # Example
//
//	eng, err := roundtable.New(roundtable.Options{Logger: logger})
//	if err != nil { ... }
//	agents := roundtable.SelectParticipants(task.Content, registered)
//	res, err := eng.Run(ctx, task, agents, func(p roundtable.Progress) { publish(p) })
//	// err is non-nil only for an invalid task or a cancelled ctx; res is
//	// always complete enough to store and render.
//	reply := roundtable.RenderMarkdown(res)
package roundtable
