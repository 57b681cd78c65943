package proxy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"jarvis/service/proxy"
)

func jsonUnmarshalStrict(src string, v any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(src)))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// FuzzParseCallback: the response decoder never panics, rejects invalid
// JSON as ErrMalformed, and a final response always has Final set.
func FuzzParseCallback(f *testing.F) {
	seeds := []struct{ body, path string }{
		{`{"messageId":"msg-123","output":[{"type":"text","content":"Final answer"}],"debug":[{"type":"thought","content":"a"}],"sessionInfo":{"status":"idle","conversationState":"COMPLETED","output":{"type":"text","content":"Final answer"}}}`, ""},
		{`{"output":[{"type":"image","content":"u"}, "s", 1, null, [true]]}`, ""},
		{`{"choices":[{"message":{"content":"x"}}]}`, "choices[0].message.content"},
		{`[{"a":[{"b":"c"}]}]`, "[-1].a[*].b"},
		{`{"output": [`, ""},
		{`{"a":1e999}`, "a"},
		{"\xff\xfe", ""},
		{`{"sessionInfo":{"output":null}}`, ""},
	}
	for _, s := range seeds {
		f.Add([]byte(s.body), s.path)
	}
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		r, err := proxy.ParseCallback(body, proxy.Mapping{Output: path})
		if err != nil {
			if !errors.Is(err, proxy.ErrMalformed) && !errors.Is(err, proxy.ErrInvalid) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		var turn proxy.Turn
		got, err := turn.Add(r)
		if err != nil || got.Final != r.Final {
			t.Fatalf("Turn.Add = %+v, %v", got, err)
		}
		if r.Final && !turn.Done() {
			t.Fatal("final response did not complete the turn")
		}
	})
}

// FuzzTemplate: rendering never panics, and a template given as a JSON
// object or array renders to valid JSON whatever the values.
func FuzzTemplate(f *testing.F) {
	f.Add(`{"q":"{{input}}","s":"{{sessionId}}","note":"{{userId}} said {{input}}","n":"{{metadata.n}}"}`, "hello \"world\"\n", "s1", "u\\1", "meta")
	f.Add(`["{{metadata}}", "{{debug}}", {"{{input}}": "{{stream}}"}]`, "</script>", "", "", "")
	f.Add(`{"a":"\"{{input}}\\"}`, "\x00\xff", "\u2028", "", "x")
	f.Add(`"{{input}}"`, "", "", "", "")
	f.Fuzz(func(t *testing.T, tmpl, input, sessionID, userID, meta string) {
		d := proxy.Definition{URL: "http://127.0.0.1:1/", Body: json.RawMessage(tmpl)}
		body, err := proxy.RenderBody(d, proxy.Input{Text: input, SessionID: sessionID, UserID: userID,
			Metadata: map[string]any{"n": meta, "nested": map[string]any{"k": []any{meta, 1.5}}}})
		if err != nil {
			return // an invalid template is refused, never rendered
		}
		trimmed := bytes.TrimSpace([]byte(tmpl))
		isText := len(trimmed) > 0 && trimmed[0] == '"' // template text: may be anything
		if json.Valid(trimmed) && !isText && !json.Valid(body) {
			t.Fatalf("template %s rendered to invalid JSON %s", tmpl, body)
		}
	})
}
