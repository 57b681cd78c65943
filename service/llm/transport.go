package llm

import "net/http"

// Connection pool of the calls to model servers. net/http's default
// transport keeps 2 idle connections per host: a service relaying more than
// two concurrent turns to one model server (the usual case: one local
// server, or one provider's API) closed a connection after nearly every
// request and dialled a new one for the next, paying a TCP (and TLS)
// handshake on the hot path. These numbers keep one warm connection per
// concurrent turn for a desktop's load.
const (
	maxIdlePerHost = 64
	maxIdle        = 256
)

// NewTransport returns the transport for model servers: net/http's default
// settings (environment proxy, dial and TLS timeouts, HTTP/2) with a pool
// that keeps a connection per concurrent call.
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = maxIdlePerHost
	t.MaxIdleConns = maxIdle
	return t
}

// PooledClient returns hc when it has a transport of its own (the caller
// chose it), else a copy of hc on a new NewTransport. Call it once and share
// the result: the pool lives in the transport.
func PooledClient(hc *http.Client) *http.Client {
	if hc == nil {
		hc = &http.Client{}
	}
	if hc.Transport != nil {
		return hc
	}
	c := *hc
	c.Transport = NewTransport()
	return &c
}
