package callback

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestTokensAreKeptOnlyAsTheirHash(t *testing.T) {
	tok, hash, err := NewToken("xcb_")
	if err != nil {
		t.Fatal(err)
	}
	tok2, hash2, err := NewToken("xcb_")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "xcb_") || len(tok) != len("xcb_")+43 || tok == tok2 || hash == hash2 {
		t.Fatalf("tokens %q %q", tok, tok2)
	}
	if HashToken(tok) != hash || len(hash) != 64 || strings.Contains(hash, tok[4:]) {
		t.Fatalf("hash %q of %q", hash, tok)
	}
}

func TestBaseLearnsTheListenersAddressNotTheHostHeader(t *testing.T) {
	var b Base
	if b.URL() != "" || b.Or("https://agents.example") != "https://agents.example" {
		t.Fatal("nothing learnt yet")
	}
	r := httptest.NewRequest("GET", "/health", nil)
	r.Host = "[::1]:8080" // what a client says: never used
	r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080})))
	b.Note(r)
	if b.URL() != "http://127.0.0.1:8080" || b.Or("") != "http://127.0.0.1:8080" || b.Or("https://agents.example") != "https://agents.example" {
		t.Fatalf("learnt %q", b.URL())
	}
	b.Note(httptest.NewRequest("GET", "/health", nil)) // no connection address: nothing changes
	if b.URL() != "http://127.0.0.1:8080" {
		t.Fatalf("after a request without an address: %q", b.URL())
	}
}
