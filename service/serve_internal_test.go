package service

import (
	"context"
	"net/http/httptest"
	"testing"

	"jarvis/service/config"
)

// serve starts a Service with the configuration cfgJSON in a temporary data
// directory, behind a real HTTP server; both stop when the test ends.
func serve(tb testing.TB, cfgJSON, token string) (*Service, *httptest.Server) {
	tb.Helper()
	cfg, err := config.Parse("test.json", []byte(cfgJSON))
	if err != nil {
		tb.Fatal(err)
	}
	s, err := New(context.Background(), Options{DataDir: tb.TempDir(), Config: cfg, Token: token})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	tb.Cleanup(func() { srv.Close(); s.Close() })
	return s, srv
}
