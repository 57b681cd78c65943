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
)

// FuzzSanitizeExternalText: the cleaner of external agents' callback bodies
// keeps every valid byte, drops exactly the bytes it counts, and leaves valid
// UTF-8 without NUL.
func FuzzSanitizeExternalText(f *testing.F) {
	for _, s := range []string{"", "plain", "nul\x00byte", "bad\xff\xfeutf8", "\xc3(", "\xe2\x82", "é\x00\xed\xa0\x80", "\x00\x00\x00", "ok \U0001F600"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, rep := sanitizeExternalText(in)
		if !utf8.ValidString(out) || strings.IndexByte(out, 0) >= 0 {
			t.Fatalf("%q -> %q: not clean", in, out)
		}
		if len(out)+rep.InvalidUTF8Bytes+rep.NULBytes != len(in) {
			t.Fatalf("%q -> %q: %d kept + %+v removed != %d", in, out, len(out), rep, len(in))
		}
		if utf8.Valid(in) && bytes.IndexByte(in, 0) < 0 && (out != string(in) || rep.changed()) {
			t.Fatalf("clean input %q changed to %q (%+v)", in, out, rep)
		}
		if again, rep2 := sanitizeExternalText([]byte(out)); again != out || rep2.changed() {
			t.Fatalf("not idempotent: %q -> %q", out, again)
		}
	})
}

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
		if want, rep := sanitizeExternalText(body); !asJSON && (got.Text != want || rep.changed() != strings.Contains(string(got.Meta), `"sanitized"`)) {
			t.Fatalf("stored %q meta %s, want %q (%+v)", got.Text, got.Meta, want, rep)
		}
	})
}
