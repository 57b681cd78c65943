// Package testhttp is what tests of HTTP handlers share: one request with
// a JSON body whose status is checked and whose answer is decoded (Do),
// and one whose error envelope (docs/protocols/service-api.md) is checked
// (Fails).
package testhttp

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"jarvis/api"
)

// Do sends method url with body (JSON; "" sends none) and fails tb unless
// the answer's status is want; the answer is decoded into out when out is
// not nil.
func Do(tb testing.TB, method, url, body string, want int, out any) {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: reading the answer: %v", method, url, err)
	}
	if resp.StatusCode != want {
		tb.Fatalf("%s %s: status %d, want %d: %s", method, url, resp.StatusCode, want, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			tb.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
}

// Fails sends a request that must fail with status and the envelope code,
// with a message, and returns the envelope's details.
func Fails(tb testing.TB, method, url, body string, status int, code string) map[string]any {
	tb.Helper()
	var eb api.ErrorBody
	Do(tb, method, url, body, status, &eb)
	if eb.Error.Code != code || eb.Error.Message == "" {
		tb.Fatalf("%s %s: error %+v, want code %s with a message", method, url, eb.Error, code)
	}
	return eb.Error.Details
}
