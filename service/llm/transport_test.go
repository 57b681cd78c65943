package llm

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Concurrent model calls reuse their connections: a second round of 8
// concurrent requests dials nothing new. (net/http's default transport keeps
// 2 idle connections per host and would dial 6 again.)
func TestPooledClientKeepsAConnectionPerConcurrentCall(t *testing.T) {
	const n = 8
	var dials atomic.Int64
	var arrived sync.WaitGroup
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	hc := PooledClient(&http.Client{})
	if hc.Transport == nil {
		t.Fatal("PooledClient left the default transport")
	}
	round := func() {
		arrived.Add(n)
		release = make(chan struct{})
		var done sync.WaitGroup
		for range n {
			done.Add(1)
			go func() {
				defer done.Done()
				resp, err := hc.Get(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}()
		}
		arrived.Wait() // all n are in flight at once, each on its own connection
		close(release)
		done.Wait()
	}
	round()
	if got := dials.Load(); got != n {
		t.Fatalf("first round dialled %d connections, want %d", got, n)
	}
	round()
	if got := dials.Load(); got != n {
		t.Errorf("second round dialled %d new connections; want 0 (each call should reuse a pooled one)", got-n)
	}

	own := &http.Client{Transport: &http.Transport{}}
	if PooledClient(own) != own {
		t.Error("a client with its own transport must be used as given")
	}
}
