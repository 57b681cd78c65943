package faults

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The faults a faultProxy injects.
const (
	faultNone      = "none"           // forward as is
	faultLatency   = "latency"        // answer only after latency (past every timeout here)
	faultReset0    = "reset0"         // reset the connection before any byte of the answer
	faultResetMid  = "reset_mid"      // status line, headers and half the body, then a reset
	faultByteWise  = "one_byte"       // the whole answer, one byte per write and flush
	faultOversized = "oversized"      // 200 with a JSON body of oversizedBytes
	faultMalformed = "malformed_json" // the upstream's answer cut in half
	faultRedirLo   = "redirect_loopback"
	faultRedirMeta = "redirect_metadata"
)

const (
	latency        = 4 * time.Second
	oversizedBytes = 6 << 20 // over the proxy (1 MiB) and round-table (5 MB) caps
	metadataURL    = "http://169.254.169.254/latest/meta-data/iam/security-credentials/"
)

// faultProxy is a reverse proxy on loopback between the service and the
// agents. A request to /{name}/{rest} goes to upstream name's /{rest}, with
// the fault currently set for name applied to the answer.
type faultProxy struct {
	t   testing.TB
	srv *httptest.Server
	// trap is where redirect_loopback points; it must never be hit.
	trap     *httptest.Server
	trapHits atomic.Int64

	mu        sync.Mutex
	upstreams map[string]string
	faults    map[string]string
}

func newFaultProxy(t testing.TB) *faultProxy {
	p := &faultProxy{t: t, upstreams: map[string]string{}, faults: map[string]string{}}
	p.trap = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.trapHits.Add(1)
		io.WriteString(w, `{"stolen":true}`)
	}))
	t.Cleanup(p.trap.Close)
	p.srv = httptest.NewServer(p)
	t.Cleanup(p.srv.Close)
	return p
}

// route registers an upstream and returns the proxied base URL for it.
func (p *faultProxy) route(name, upstream string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.upstreams[name] = strings.TrimRight(upstream, "/")
	p.faults[name] = faultNone
	return p.srv.URL + "/" + name
}

func (p *faultProxy) set(name, fault string) {
	p.mu.Lock()
	p.faults[name] = fault
	p.mu.Unlock()
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	p.mu.Lock()
	up, ok := p.upstreams[name]
	fault := p.faults[name]
	p.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch fault {
	case faultReset0:
		reset(w)
		return
	case faultRedirLo:
		http.Redirect(w, r, p.trap.URL+"/stolen", http.StatusTemporaryRedirect)
		return
	case faultRedirMeta:
		http.Redirect(w, r, metadataURL, http.StatusTemporaryRedirect)
		return
	case faultOversized:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"pad":"`)
		chunk := bytes.Repeat([]byte("A"), 64<<10)
		for n := 0; n < oversizedBytes; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return // the reader stopped at its cap, as it should
			}
		}
		io.WriteString(w, `"}`)
		return
	case faultLatency:
		select {
		case <-time.After(latency):
		case <-r.Context().Done():
			return
		}
	}

	body, _ := io.ReadAll(r.Body)
	target := up + "/" + rest
	if r.URL.RawQuery != "" {
		target += "?" + r.URL.RawQuery
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, target, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for k, vs := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	switch fault {
	case faultMalformed:
		answer = answer[:len(answer)/2]
	case faultResetMid:
		// The full length is announced, half is sent, then the connection
		// is reset: the reader sees a body that breaks off.
		w.Header().Set("Content-Length", itoa(len(answer)))
		w.WriteHeader(resp.StatusCode)
		w.Write(answer[:len(answer)/2])
		w.(http.Flusher).Flush()
		reset(w)
		return
	case faultByteWise:
		w.Header().Set("Content-Length", itoa(len(answer)))
		w.WriteHeader(resp.StatusCode)
		for i := range answer {
			if _, err := w.Write(answer[i : i+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			time.Sleep(300 * time.Microsecond)
		}
		return
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(answer)
}

// reset takes the connection over and closes it with an RST (linger 0).
func reset(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return string(b[i:])
}
