package service

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"jarvis/api"
	"jarvis/service/externalrt"
)

// FuzzExternalCallback posts arbitrary bodies (raw text or JSON) to the
// callback route of the real handler: never a 5xx, and an accepted reply is
// stored and published clean.
func FuzzExternalCallback(f *testing.F) {
	for _, s := range []string{"hello", `{"text":"hi"}`, `{"text":"nul\u0000 and \ud800"}`, "bad\xff\x00", `{"text":`, `{"text":""}`, "   ", `[1,2]`, `{"text":"` + "\xff\xfe" + `"}`} {
		f.Add(false, []byte(s))
		f.Add(true, []byte(s))
	}
	_, srv := serve(f, `{"agents":[{"agentId":"ext","displayName":"Ext","type":"external",
		"external":{"inputUrl":"http://127.0.0.1:9/in","callbackAuth":"none","maxMessageBytes":65536}}]}`, "fuzz-token")
	c := api.NewClient(srv.URL, "fuzz-token", nil)
	id := "FUZZ-1"
	var created api.CreateOperationResponse
	if err := c.Do(context.Background(), "POST", "/api/plugins/sessions/operations/create", api.CreateOperationRequest{AgentID: "ext", SessionID: &id}, &created); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, asJSON bool, body []byte) {
		ct := "text/plain"
		if asJSON {
			ct = "application/json"
		}
		resp, err := http.Post(srv.URL+"/external/sessions/"+id+"/messages", ct, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%q (%s): %d %s", body, ct, resp.StatusCode, b)
		}
		if resp.StatusCode != 200 {
			return
		}
		var ok api.ExternalMessageResponse
		if err := json.Unmarshal(b, &ok); err != nil || ok.MessageID == 0 {
			t.Fatalf("accepted without a message: %s", b)
		}
		var tr api.Transcript
		if err := c.Do(context.Background(), "GET", "/v1/sessions/"+id+"/messages", nil, &tr); err != nil {
			t.Fatal(err)
		}
		var got *api.TranscriptMessage
		for i := range tr.Messages {
			if tr.Messages[i].ID == ok.MessageID {
				got = &tr.Messages[i]
			}
		}
		if got == nil {
			t.Fatalf("message %d not stored", ok.MessageID)
		}
		if !utf8.ValidString(got.Text) || strings.IndexByte(got.Text, 0) >= 0 || strings.TrimSpace(got.Text) == "" {
			t.Fatalf("stored %q for %q", got.Text, body)
		}
		if want, rep := externalrt.SanitizeText(body); !asJSON && (got.Text != want || rep.Changed() != strings.Contains(string(got.Meta), `"sanitized"`)) {
			t.Fatalf("stored %q meta %s, want %q (%+v)", got.Text, got.Meta, want, rep)
		}
	})
}
