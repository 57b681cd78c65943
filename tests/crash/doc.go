// Package crash kills the real jarvis-service binary with SIGKILL at random
// points of a mixed load (chat turns with tool calls, memory writes, stream
// readers) and checks what a user relies on after a crash: the database is
// sound, every write acknowledged to a client is there, interrupted turns
// say so, and Last-Event-ID replay is consistent. It has only tests.
package crash
