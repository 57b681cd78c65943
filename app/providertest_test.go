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
	if _, err := d.app.TestProvider(api.SetProviderRequest{Provider: "openai-compatible", BaseURL: "not a url"}); err == nil || !strings.Contains(err.Error(), "The server address must start with http:// or https://") {
		t.Fatalf("bad URL: %v", err)
	}
}

// TestProviderErrorsInPlainWords: a server address the service refuses is
// explained in words, without the config file's key (it said "baseUrl must
// be an http(s) URL …").
func TestProviderErrorsInPlainWords(t *testing.T) {
	d := newRealDesktop(t, 60, `{"rules":[]}`)
	for _, call := range []func() error{
		func() error {
			_, err := d.app.TestProvider(api.SetProviderRequest{Provider: "openai-compatible", BaseURL: "ftp://127.0.0.1:11434/v1", Model: "llama3.2"})
			return err
		},
		func() error {
			_, err := d.app.SetProvider(api.SetProviderRequest{Provider: "openai-compatible", BaseURL: "127.0.0.1 11434", Model: "llama3.2"})
			return err
		},
	} {
		err := call()
		if err == nil || strings.Contains(err.Error(), "baseUrl") || !strings.Contains(err.Error(), "The server address must start with http:// or https://") {
			t.Fatalf("error %v", err)
		}
	}
}

// TestBusyConversationInPlainWords: a message sent while the conversation
// still answers is refused in words, without the session id and the route
// the service's message names for programs.
func TestBusyConversationInPlainWords(t *testing.T) {
	err := friendly(&api.StatusError{Status: 409, Err: api.Error{Code: "turn_in_progress", Message: "session g_1 is already answering a message; wait for it or cancel it (POST /v1/chat/cancel)"}})
	if err == nil || strings.Contains(err.Error(), "/v1/") || strings.Contains(err.Error(), "g_1") || !strings.Contains(err.Error(), "press Stop") {
		t.Fatalf("%v", err)
	}
}
