// Package injection is the prompt-injection suite.
//
//   - corpus_test.go: a corpus of injections (plain "ignore previous
//     instructions" variants, homoglyphs, zero-width and other invisible
//     characters, base64, fake system/tool tags and chat markup) is put in
//     round-table agents' replies, each in its own finding; every entry must
//     come back flagged prompt_injection, and none of the benign controls.
//   - gate_test.go: the real service, driven by the scripted model, makes
//     tool calls whose reason (and arguments) claim they are safe and
//     approved; the desktop gate (app/gate, in process) classifies the
//     tool.request events: a deny rule still denies, a risky tool stays
//     risky, and a tool outside the agent's allowlist is never even sent.
//
// Run: go test -race -tags sqlite_fts5 ./tests/injection/
package injection
