package testhttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"jarvis/internal/testhttp"
)

func TestDoAndFails(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("content type %q", r.Header.Get("Content-Type"))
		}
		if r.URL.Path == "/bad" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error": {"code": "invalid_field", "message": "q is wrong", "details": {"field": "q"}}}`))
			return
		}
		w.Write([]byte(`{"n": 2}`))
	}))
	defer srv.Close()
	var out struct{ N int }
	testhttp.Do(t, "POST", srv.URL+"/ok", `{}`, http.StatusOK, &out)
	if out.N != 2 {
		t.Fatalf("decoded %+v", out)
	}
	if d := testhttp.Fails(t, "GET", srv.URL+"/bad", "", http.StatusBadRequest, "invalid_field"); d["field"] != "q" {
		t.Fatalf("details %v", d)
	}
}
