// Package listener owns the socket side of the service's HTTP server: the
// loopback-only bind (Listen), the connection cap that keeps room for
// clients holding the token (conncap.go), the timeouts that let an idle
// client park a connection (conntimeouts.go) and the graceful Shutdown.
// Routes and guards are package httpapi's; a request that passed the token
// check marks its connection trusted with TrustConn.
package listener
