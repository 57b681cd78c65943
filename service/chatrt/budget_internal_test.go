package chatrt

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"jarvis/service/turn"
)

// The window is read from what each kind of local server reports.
func TestProbeWindowShapes(t *testing.T) {
	cases := []struct {
		name  string
		path  string
		body  string
		model string
		want  int
	}{
		{"vllm", "/v1/models", `{"object":"list","data":[{"id":"other","max_model_len":4096},{"id":"m","max_model_len":32768}]}`, "m", 32768},
		{"lmstudio-models", "/v1/models", `{"data":[{"id":"m","loaded_context_length":16384,"max_context_length":131072}]}`, "m", 16384},
		{"llama.cpp", "/props", `{"default_generation_settings":{"n_ctx":8192},"total_slots":1}`, "m", 8192},
		{"lmstudio-v0", "/api/v0/models/m", `{"id":"m","max_context_length":32768,"loaded_context_length":12000}`, "m", 12000},
		{"ollama", "/api/show", `{"parameters":"stop \"<|eot_id|>\"\nnum_ctx 24576\ntemperature 0.7","model_info":{"llama.context_length":131072}}`, "m", 24576},
		{"none", "/elsewhere", `{}`, "m", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != c.path {
					http.NotFound(w, r)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, c.body)
			}))
			defer srv.Close()
			rt := &Runtime{env: turn.Env{HTTPClient: srv.Client()}}
			if got := rt.probeWindow(context.Background(), srv.URL+"/v1", c.model); got != c.want {
				t.Fatalf("window %d, want %d", got, c.want)
			}
		})
	}
}

func TestModelWindowAndNamedWindow(t *testing.T) {
	for model, want := range map[string]int{"gpt-4o-mini": 128000, "openai/gpt-4.1": 1047576, "llama3.1:8b": 131072, "llama3:8b": 8192,
		"qwen2.5-coder:7b": 32768, "claude-sonnet-4": 200000, "my-finetune": 0} {
		if got := modelWindow(model); got != want {
			t.Errorf("%s: %d, want %d", model, got, want)
		}
	}
	for msg, want := range map[string]int{
		"This model's maximum context length is 8192 tokens. However, ...":                    8192,
		`{"code":400,"type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":4096}`: 4096,
		"the model is loaded with context length of only 16384 tokens, which is not enough":   16384,
		"prompt too long; exceeded max context length by 100 tokens":                          0,
	} {
		if got := namedWindow(msg); got != want {
			t.Errorf("%q: %d, want %d", msg, got, want)
		}
	}
}
