// Package proxy owns the proxy-agent client of docs/protocols/proxy-agents.md: calling an agent
// that already runs elsewhere, described only by an HTTP request definition
// (method, URL, headers with keyring secret references, a body, metadata),
// in the Agent Protocol format or through a body template and a response
// mapping for agents that speak another shape.
//
// It owns: the Definition and its validation; rendering the request (the
// Agent Protocol request, or a template); sending it with a timeout on the
// whole wait, redirects refused and a response-size cap; decoding the answer
// (sync JSON, streamed SSE or NDJSON messages, async callbacks via
// ParseCallback) and stitching partial answers into the final one (Turn);
// the Test action; and per-agent health (HealthTracker). Errors are typed
// (ErrTimeout, *ErrStatus, ErrMalformed, ErrTooLarge, ErrRedirect,
// ErrUnreachable, …) so the caller maps them without parsing messages.
//
// It does not own sessions, events, the callback HTTP route, its
// authentication, storage or the keyring: the session runtime does, and
// hands this package a secret resolver and callback URLs.
//
// # Concurrency
//
// A *Client is immutable after New and safe for concurrent use; calls share
// only the *http.Client and the HealthTracker, which is internally locked.
// Call invokes its onChunk callback on the calling goroutine, one chunk at a
// time and in order, before Call returns; a slow callback slows reading the
// stream (and counts against the timeout). A Turn is safe for concurrent use
// so that simultaneous callbacks of one turn can be added from several
// request goroutines; exactly one Add returns the final response. Definition,
// Mapping and the decode functions hold no shared state.
//
// # Example
//
//	c, err := proxy.New(proxy.Options{Secrets: keyringLookup, Logger: log})
//	if err != nil { ... }
//	resp, err := c.Call(ctx, def, proxy.Input{SessionID: sid, UserID: uid, Text: msg},
//		func(ch proxy.Chunk) { publishDelta(ch.Text) })
//	switch {
//	case errors.Is(err, proxy.ErrTimeout): ...
//	case err != nil: ...
//	case resp.Pending: // async: wait for callbacks
//		// in the callback route, per turn:
//		r, err := proxy.ParseCallback(body, def.ResponseMapping)
//		shown, err := turn.Add(r) // shown.Final completes the turn
//	default:
//		publishFinal(resp.Output)
//	}
package proxy
