package llm

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// chunkCorpus holds chunks as servers send them (go-openai's own encoding,
// OpenAI, llama.cpp/Ollama-style, tool calls split across chunks) and the
// awkward cases: escapes, non-ASCII, invalid UTF-8, nulls, keys that
// encoding/json matches without case, repeated keys, numbers it will not
// store in an int, deep nesting, junk around the value.
func chunkCorpus(t testing.TB) (common, awkward []string) {
	idx := func(i int) *int { return &i }
	for _, r := range []openai.ChatCompletionStreamResponse{
		{ID: "c1", Object: "chat.completion.chunk", Model: "m", Choices: []openai.ChatCompletionStreamChoice{{Delta: openai.ChatCompletionStreamChoiceDelta{Role: "assistant"}}}},
		{ID: "c1", Object: "chat.completion.chunk", Model: "m", Choices: []openai.ChatCompletionStreamChoice{{Delta: openai.ChatCompletionStreamChoiceDelta{Content: "w5 "}}}},
		{ID: "c1", Choices: []openai.ChatCompletionStreamChoice{{Delta: openai.ChatCompletionStreamChoiceDelta{Content: "line\n\"quoted\" \\ tab\t é 日本 😀 </script>"}}}},
		{ID: "c1", Choices: []openai.ChatCompletionStreamChoice{{Delta: openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{
			{Index: idx(0), ID: "call_a", Type: "function", Function: openai.FunctionCall{Name: "read_file"}},
			{Index: idx(1), ID: "call_b", Type: "function", Function: openai.FunctionCall{Name: "notify", Arguments: `{"title":`}}}}}}},
		{ID: "c1", Choices: []openai.ChatCompletionStreamChoice{{Delta: openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{{Index: idx(1), Function: openai.FunctionCall{Arguments: `"hi \"x\""}`}}}}}}},
		{ID: "c1", Choices: []openai.ChatCompletionStreamChoice{{FinishReason: openai.FinishReasonToolCalls}}},
		{ID: "c1", Choices: []openai.ChatCompletionStreamChoice{{Index: 1, Delta: openai.ChatCompletionStreamChoiceDelta{Content: "b"}}, {Delta: openai.ChatCompletionStreamChoiceDelta{Content: "a"}, FinishReason: openai.FinishReasonStop}}},
		{ID: "c1", Usage: &openai.Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15}},
	} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		common = append(common, string(b))
	}
	common = append(common,
		`{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1731000000,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-9","object":"chat.completion.chunk","created":1731000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":0}}}`,
		`{"id":"x","object":"chat.completion.chunk","created":1.5e9,"model":"llama","choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"hmm"},"finish_reason":null}],"timings":{"predicted_ms":-0.25E-3}}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"t","type":"function","function":{"name":"run_command","arguments":"{\"program\":\"ls\"}"}}]},"finish_reason":null}]}`,
		` { "choices" : [ { "delta" : { "content" : "spaced" } , "finish_reason" : "stop" } ] } `,
		`{}`, `{"choices":null}`, `{"choices":[{"delta":null}]}`, `{"choices":[{"delta":{"tool_calls":null}}]}`,
		`{"choices":[{"delta":{"tool_calls":[]}}]}`, `{"choices":[{"delta":{"tool_calls":[{"index":null,"function":null}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":-0}]}}]}`, `{"choices":[{"delta":{"tool_calls":[{"index":7}]}}]}`,
		`{"a":{"b":[1,2,{"c":[true,false,null,"\u00e9\ud83d\ude00"]}]},"choices":[{"delta":{"content":"x"}}]}`,
	)
	awkward = []string{
		``, ` `, `null`, `[]`, `"choices"`, `{`, `}`, `{"choices":`, `{"choices":[`, `{"choices":[{`,
		`{"Choices":[{"delta":{"content":"folded"}}]}`, `{"choices":[{"DELTA":{"content":"x"}}]}`,
		`{"choices":[{"delta":{"Content":"x","content":"y"}}]}`, `{"choices":[{"delta":{"content":"x","content":"y"}}]}`,
		`{"choices":[{"delta":{"content":"a"}}],"choices":[{"delta":{"content":"b"}}]}`,
		`{"choiceſ":[{"delta":{"content":"long s"}}]}`, `{"choices":[{"delta":{"tool_calls":[{"function":{"nAme":"K"}}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":1.0}]}}]}`, `{"choices":[{"delta":{"tool_calls":[{"index":1e2}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":01}]}}]}`, `{"choices":[{"delta":{"tool_calls":[{"index":99999999999999999999}]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":"0"}]}}]}`, `{"choices":[{"delta":{"content":5}}]}`,
		`{"choices":[{"delta":{"content":true}}]}`, `{"choices":{"delta":{}}}`, `{"choices":[null]}`, `{"choices":[1]}`,
		`{"choices":[{"finish_reason":["stop"]}]}`, `{"choices":[{"delta":"text"}]}`,
		"{\"choices\":[{\"delta\":{\"content\":\"bad \xff utf-8\"}}]}", "{\"choices\":[{\"delta\":{\"content\":\"ctl \x01\"}}]}",
		`{"choices":[{"delta":{"content":"lone \ud800 surrogate"}}]}`, `{"choices":[{"delta":{"content":"bad \x escape"}}]}`,
		`{"choices":[{"delta":{"content":"\u00"}}]}`, `{"choices":[{"delta":{"content":"ends \"}}]}`,
		`{"\u0063hoices":[{"delta":{"content":"escaped key"}}]}`, `{"x":1,}`, `{"x":[1,]}`, `{"x":-}`, `{"x":1.}`, `{"x":1e}`,
		`{"x":.5}`, `{"x":+1}`, `{"x":tru}`, `{"x":nul}`, `{"x" 1}`, `{"x":1 "y":2}`, `{"choices":[]} x`, `{"choices":[]}{}`,
		`{"choices":[{"delta":{"content":"a"}}]]`, "\t{\"choices\":[]}\r\n", `{"x":` + strings.Repeat(`[`, 100) + strings.Repeat(`]`, 100) + `}`,
		`{"x":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat(`}`, 100) + `}`,
		`{"x":{"\u0061":1,"a":2,"b":{"c":[{}]}}}`,
		`{"x":` + strings.Repeat(`[`, 20000) + strings.Repeat(`]`, 20000) + `}`, // last: too long for every prefix
	}
	return common, awkward
}

// checkChunk decodes raw with decodeChunk and with encoding/json alone:
// same value, same failure; and when the scanner took it, encoding/json
// must have taken it too.
func checkChunk(t *testing.T, raw string) (fast bool) {
	t.Helper()
	var want streamChunk
	werr := json.Unmarshal([]byte(raw), &want)
	d := chunkScanner{b: []byte(raw)}
	got, ok := d.chunk()
	if ok && (werr != nil || !reflect.DeepEqual(got, want)) {
		t.Fatalf("scanner took %q as %+v; encoding/json: %+v, %v", raw, got, want, werr)
	}
	c, err := decodeChunk([]byte(raw))
	if (err != nil) != (werr != nil) || (err == nil && !reflect.DeepEqual(c, want)) {
		t.Fatalf("decodeChunk(%q) = %+v, %v; encoding/json: %+v, %v", raw, c, err, want, werr)
	}
	return ok
}

func TestDecodeChunkIsEncodingJSONs(t *testing.T) {
	common, awkward := chunkCorpus(t)
	for _, raw := range common {
		// The shapes servers send are read by the scanner, not handed on.
		if !checkChunk(t, raw) {
			t.Errorf("the scanner gave up on %s", raw)
		}
	}
	fast := 0
	for _, raw := range awkward {
		if checkChunk(t, raw) {
			fast++
		}
	}
	if fast == 0 || fast == len(awkward) {
		t.Errorf("the scanner took %d of %d awkward inputs: expected some, not all", fast, len(awkward))
	}
	// Every prefix of every chunk (a stream cut anywhere), and random
	// edits of them.
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("{}[]:,\"\\ \t\n0123456789.-+eEtrufalsn\x00\x1f\xc3\xa9\xff\xed\xa0\x80uU" + "choicesdeltacontentfinish_reasontool_callsindexidfunctionnamearguments")
	for _, raw := range append(common, awkward[:len(awkward)-1]...) {
		for i := range raw {
			checkChunk(t, raw[:i])
		}
		for range 300 {
			b := []byte(raw)
			for range 1 + rng.IntN(3) {
				switch p := rng.IntN(len(b) + 1); rng.IntN(3) {
				case 0: // insert
					b = append(b[:p], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[p:]...)...)
				case 1: // delete
					if p < len(b) {
						b = append(b[:p], b[p+1:]...)
					}
				default: // replace
					if p < len(b) {
						b[p] = alphabet[rng.IntN(len(alphabet))]
					}
				}
			}
			checkChunk(t, string(b))
		}
	}
}

// The scanner leaves values nested deeper than maxChunkDepth, in objects as
// in arrays, to encoding/json (which refuses more than 10,000 levels; the
// comparison above would need inputs that deep).
func TestChunkScannerDepth(t *testing.T) {
	for _, open := range []string{`[`, `{"a":`} {
		closing := map[string]string{`[`: `]`, `{"a":`: `}`}[open]
		for _, c := range []struct {
			depth int
			ok    bool
		}{{maxChunkDepth - 1, true}, {maxChunkDepth, true}, {maxChunkDepth + 1, false}} {
			// The value of "x" is at depth 1.
			raw := `{"x":` + strings.Repeat(open, c.depth-1) + `1` + strings.Repeat(closing, c.depth-1) + `}`
			d := chunkScanner{b: []byte(raw)}
			if _, ok := d.chunk(); ok != c.ok {
				t.Errorf("%d levels of %s: scanner took it %v, want %v", c.depth, open, ok, c.ok)
			}
		}
	}
}

func FuzzDecodeChunk(f *testing.F) {
	common, awkward := chunkCorpus(f)
	for _, raw := range append(common, awkward...) {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkChunk(t, raw) })
}

// The service's work per delta: decodeChunk against what it replaced
// (go-openai's Recv decodes into its whole response type) and against
// encoding/json into the same small type.
func BenchmarkDecodeChunk(b *testing.B) {
	raw, _ := json.Marshal(openai.ChatCompletionStreamResponse{ID: "chatcmpl-1", Object: "chat.completion.chunk", Model: "m",
		Choices: []openai.ChatCompletionStreamChoice{{Delta: openai.ChatCompletionStreamChoiceDelta{Content: "w5 "}}}})
	b.Run("decodeChunk", func(b *testing.B) {
		for b.Loop() {
			if c, err := decodeChunk(raw); err != nil || c.Choices[0].Delta.Content != "w5 " {
				b.Fatal(c, err)
			}
		}
	})
	b.Run("encoding-json-small-type", func(b *testing.B) {
		for b.Loop() {
			var c streamChunk
			if err := json.Unmarshal(raw, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-openai-type", func(b *testing.B) {
		for b.Loop() {
			var c openai.ChatCompletionStreamResponse
			if err := json.Unmarshal(raw, &c); err != nil {
				b.Fatal(err)
			}
		}
	})
}
