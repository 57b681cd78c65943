// Package security is the security suite of docs/SECURITY.md: it attacks the
// real service (in-process on a real loopback socket, and the real
// jarvis-service binary) the way a web page, a rebinding DNS name, another
// local user's program or a slow client would, on every route of the route
// table. It has only tests.
package security
