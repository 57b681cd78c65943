// Package faults is the outbound-fault suite: the real service (in
// process, real SQLite file, real HTTP on loopback) talks to external,
// proxy and round-table agents through a fault-injecting reverse proxy
// (faultProxy) that delays answers past the timeout, resets connections
// before or in the middle of a body, dribbles the body one byte at a time,
// sends oversized or truncated JSON, or redirects to a loopback trap or to
// the cloud metadata address.
//
// Each fault must end in a typed outcome (an error event code, or a
// round-table exclusion kind), never a panic or a hung turn, and the rest
// must go on: the session takes its next message, and a round table
// completes with the faulty agent excluded. Redirects are never followed:
// the loopback trap counts its hits and must count none.
//
// Run: go test -race -tags sqlite_fts5 ./tests/faults/
package faults
