package app

import (
	"net/http/httptest"
	"strings"
	"testing"

	"jarvis/api"
	"jarvis/internal/testpeer"
)

// The setup panel's Test connection goes through the real service to a
// real (scripted) OpenAI-compatible server: a found model, a missing one,
// and a bad base URL as the service's plain-word refusal.
func TestTestProvider(t *testing.T) {
	d := newRealDesktop(t, 30, "")
	peer := testpeer.NewOpenAI()
	peer.Model = "llama3:latest"
	srv := httptest.NewServer(peer)
	defer srv.Close()
	got, err := d.app.TestProvider(api.SetProviderRequest{Provider: " openai-compatible ", BaseURL: srv.URL + "/v1 ", Model: "llama3"})
	if err != nil || !got.OK || got.Message != "Reached the server at "+srv.URL+"/v1: model llama3 found." {
		t.Fatalf("%+v %v", got, err)
	}
	got, err = d.app.TestProvider(api.SetProviderRequest{Provider: "openai-compatible", BaseURL: srv.URL + "/v1", Model: "mistral"})
	if err != nil || got.OK || got.Kind != "model_missing" || !strings.Contains(got.Message, "It has llama3:latest.") {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := d.app.TestProvider(api.SetProviderRequest{Provider: "openai-compatible", BaseURL: "not a url"}); err == nil || !strings.Contains(err.Error(), "baseUrl must be an http(s) URL") {
		t.Fatalf("bad URL: %v", err)
	}
}
