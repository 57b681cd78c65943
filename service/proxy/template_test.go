package proxy

import (
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestTemplateRender(t *testing.T) {
	vars := templateVars{
		Input: "a \"quoted\"\nline </script>", SessionID: "s1", UserID: "u1", CallbackURL: "http://127.0.0.1:1/cb?token=x&y=1",
		Debug: true, Stream: false,
		Metadata: map[string]any{"n": json.Number("42"), "tags": []any{"x", "y"}, "deep": map[string]any{"k": "v"}, "nil": nil},
	}
	tests := []struct {
		name, tmpl, want string
	}{
		{"whole string keeps type", `{"q":"{{input}}","n":"{{metadata.n}}","d":"{{debug}}","t":"{{metadata.tags}}"}`,
			`{"q":"a \"quoted\"\nline </script>","n":42,"d":true,"t":["x","y"]}`},
		{"inside a string is escaped text", `{"note":"{{userId}} says {{input}} ({{metadata.n}}, {{metadata.tags}})"}`,
			`{"note":"u1 says a \"quoted\"\nline </script> (42, [\"x\",\"y\"])"}`},
		{"nested path and index", `{"k":"{{metadata.deep.k}}","first":"{{metadata.tags[0]}}","last":"<{{metadata.tags[-1]}}>"}`,
			`{"k":"v","first":"x","last":"<y>"}`},
		{"missing is null, or nothing in a string", `{"a":"{{metadata.absent}}","b":"[{{metadata.absent}}]","c":"{{metadata.nil}}"}`,
			`{"a":null,"b":"[]","c":null}`},
		{"bare placeholders in a text template", `{"n": {{metadata.n}}, "m": {{metadata}}, "s": {{sessionId}}}`,
			`{"n": 42, "m": {"deep":{"k":"v"},"n":42,"nil":null,"tags":["x","y"]}, "s": "s1"}`},
		{"object key stays a string", `{"{{debug}}": "{{stream}}", "{{sessionId}}": 1}`,
			`{"true": false, "s1": 1}`},
		{"spaces inside braces", `["{{ callbackUrl }}"]`, `["http://127.0.0.1:1/cb?token=x&y=1"]`},
		{"escaped quote before a placeholder", `{"a":"\"{{sessionId}}\""}`, `{"a":"\"s1\""}`},
		{"two placeholders in one string", `{"a":"{{sessionId}}{{userId}}"}`, `{"a":"s1u1"}`},
		{"no placeholders", `{"static":true}`, `{"static":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl, err := compileTemplate(tt.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tmpl.render(vars)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("render\n got %s\nwant %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("rendered body is not valid JSON: %s", got)
			}
		})
	}
}

func TestTemplateCompileErrors(t *testing.T) {
	tests := []struct{ tmpl, want string }{
		{`{"a":"{{input}"}`, "unclosed {{"},
		{`{"a":"{{prompt}}"}`, "unknown placeholder {{prompt}}"},
		{`{"a":"{{secret:k}}"}`, "only be used in header values"},
		{`{"a":"{{metadata.}}"}`, "metadata."},
		{`{"a":"{{metadata.x[}}"}`, "unclosed '['"},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			_, err := compileTemplate(tt.tmpl)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestPathParse(t *testing.T) {
	tests := []struct {
		expr string
		want path
		err  bool
	}{
		{expr: "", want: nil},
		{expr: "a.b", want: path{{key: "a"}, {key: "b"}}},
		{expr: "choices[0].message.content", want: path{{key: "choices"}, {isIdx: true}, {key: "message"}, {key: "content"}}},
		{expr: "[-1][*].x", want: path{{isIdx: true, index: -1}, {isIdx: true, all: true}, {key: "x"}}},
		{expr: "a..b", err: true},
		{expr: "a.", err: true},
		{expr: ".a", err: true},
		{expr: "a[x]", err: true},
		{expr: "a[0]b", err: true},
		{expr: "a]", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := parsePath(tt.expr)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if !tt.err && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadSSE(t *testing.T) {
	stream := ": comment\r\nevent: message\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n" + // CRLF, multi-line data
		"id: 2\rdata:{\"b\":2}\r\r" + // bare CR, no space after the colon
		"data: \n\n" + // empty data: skipped
		"data: {\"c\":3}" // unterminated at EOF: still dispatched
	var got []string
	err := readSSE(strings.NewReader(stream), 1<<20, func(msg []byte) (bool, error) {
		got = append(got, string(msg))
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"{\"a\":\n1}", `{"b":2}`, `{"c":3}`}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestCapReader(t *testing.T) {
	for _, tt := range []struct {
		n, limit int
		tooLarge bool
	}{{10, 10, false}, {11, 10, true}, {0, 10, false}, {5000, 100, true}} {
		r := &capReader{r: strings.NewReader(strings.Repeat("x", tt.n)), limit: int64(tt.limit)}
		b, err := readAllSmall(r)
		if (err != nil) != tt.tooLarge {
			t.Errorf("n=%d limit=%d: err = %v", tt.n, tt.limit, err)
		}
		if len(b) > tt.limit {
			t.Errorf("n=%d limit=%d: read %d bytes past the cap", tt.n, tt.limit, len(b))
		}
	}
}

// readAllSmall reads with a small buffer so that reads straddle the cap.
func readAllSmall(r *capReader) ([]byte, error) {
	var out []byte
	buf := make([]byte, 3)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, err
		}
	}
}
