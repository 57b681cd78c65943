package chatrt

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"jarvis/service/config"
)

// budget is a chat agent's context plan for one turn, in tokens unless said.
type budget struct {
	window     int    // the model's context window
	source     string // where window came from: config, server, model, default
	reserve    int    // kept free for the reply
	reserveCfg int    // the configured reserve (0: the default)
	static     int    // the system prompt and tool schemas (set per turn)
	keep       int    // newest messages kept verbatim when compacting
	share      int    // keep's share of the window, in percent

	summaryMax   int  // a summary's length bound (max_tokens)
	summaryInput int  // what one summarizer request may read
	trimAt       int  // bytes: older tool results past this are sent trimmed
	maxMessage   int  // this turn's message past this is sent trimmed
	flush        bool // memory flush before compaction
}

// limit is what a request may use: the window less the reply's reserve.
func (b budget) limit() int { return b.window - b.reserve }

// withStatic sets the size of the system prompt and tools, and what depends on it.
func (b budget) withStatic(n int) budget {
	b.static = n
	free := b.limit() - n - b.summaryMax
	b.keep = min(b.window*b.share/100, max(free/2, 0))
	// What one message or tool result may take: what is left beside the
	// static part and a summary (estimated at up to a third above its
	// bound in the server's count).
	b.maxMessage = max(256, b.limit()-n-b.summaryMax*3/2-64)
	return b
}

// minReply is the least room for a reply a request is sent with when
// compaction failed.
const minReply = 512

// defaultWindow is the window of a model whose family is unknown: small
// enough for the local servers' usual settings.
const defaultWindow = 8192

// budgetFor plans an agent's context: its window (the agent's chat
// contextWindow, the provider's, what the server reports, the model
// family's, or 8,192 tokens), the reply reserve and the kept share.
func (rt *Runtime) budgetFor(ctx context.Context, a config.Agent) budget {
	ch := rt.env.Config().ResolvedChat(a)
	b := budget{window: ch.ContextWindow, source: "config", share: 30, flush: ch.FlushMemory()}
	if ch.KeepRecentPercent > 0 {
		b.share = ch.KeepRecentPercent
	}
	if b.window == 0 {
		b.window, b.source = rt.serverWindow(ctx, ch)
	}
	if b.window == 0 {
		b.window, b.source = modelWindow(ch.Model), "model"
	}
	if b.window == 0 {
		b.window, b.source = defaultWindow, "default"
	}
	b.reserveCfg = ch.ReplyReserveTokens
	return b.resized(b.window)
}

// resized is b planned for another window (an overflow error named the
// server's real one).
func (b budget) resized(window int) budget {
	b.window = window
	b.reserve = b.reserveCfg
	if b.reserve == 0 || b.reserve > b.window/2 {
		b.reserve = min(b.window/4, 4096)
	}
	b.summaryMax = min(b.window/8, 2048)
	b.summaryInput = b.window - b.summaryMax - estimateText(summaryPrompt) - 256
	b.trimAt = min(max(b.window*bytesPerToken/16, 1024), 16384)
	return b.withStatic(b.static)
}

// modelWindows are the context windows of well-known model families, most
// specific first (matched as a prefix of the model's name after any
// "vendor/" part, or anywhere in it for local tags such as "llama3.1:8b").
var modelWindows = []struct {
	prefix string
	tokens int
}{
	{"gpt-4.1", 1047576}, {"gpt-5", 272000}, {"gpt-4o", 128000}, {"gpt-4-turbo", 128000},
	{"o1", 200000}, {"o3", 200000}, {"o4", 200000},
	{"gpt-4-32k", 32768}, {"gpt-4", 8192}, {"gpt-3.5-turbo", 16385},
	{"claude", 200000}, {"gemini", 1048576},
	{"llama3.1", 131072}, {"llama3.2", 131072}, {"llama3.3", 131072}, {"llama-3.1", 131072}, {"llama-3.2", 131072}, {"llama-3.3", 131072},
	{"llama4", 131072}, {"llama3", 8192}, {"llama-3", 8192}, {"llama2", 4096},
	{"qwen3", 32768}, {"qwen2.5", 32768}, {"qwen", 32768},
	{"mistral-large", 131072}, {"mistral-small", 32768}, {"mistral-nemo", 131072}, {"mistral", 32768}, {"mixtral", 32768},
	{"gemma3", 131072}, {"gemma-3", 131072}, {"gemma", 8192},
	{"phi4", 16384}, {"phi-4", 16384}, {"phi3", 4096}, {"phi-3", 4096},
	{"deepseek", 65536}, {"gpt-oss", 131072},
}

func modelWindow(model string) int {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, w := range modelWindows {
		if strings.HasPrefix(m, w.prefix) {
			return w.tokens
		}
	}
	return 0
}

// windowKey names a model on a server.
func windowKey(baseURL, model string) string { return baseURL + "\x00" + model }

// serverWindow is the window an OpenAI-compatible server reports for the
// model (asked once per server and model; learned anew from an overflow
// error that names it): vLLM's max_model_len in /models, llama.cpp's n_ctx
// in /props, LM Studio's loaded_context_length, Ollama's num_ctx.
func (rt *Runtime) serverWindow(ctx context.Context, ch config.Chat) (int, string) {
	key := windowKey(ch.BaseURL, ch.Model)
	if v, ok := rt.windows.Load(key); ok {
		if n := v.(int); n > 0 {
			return n, "server"
		}
		return 0, ""
	}
	if ch.Provider != config.ProviderOpenAICompatible || ch.BaseURL == "" {
		return 0, ""
	}
	pctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	n := rt.probeWindow(pctx, strings.TrimRight(ch.BaseURL, "/"), ch.Model)
	if ctx.Err() != nil {
		return 0, "" // the turn was cancelled: ask again next time
	}
	rt.windows.Store(key, n)
	if n > 0 {
		return n, "server"
	}
	return 0, ""
}

func (rt *Runtime) probeWindow(ctx context.Context, base, model string) int {
	root := strings.TrimSuffix(base, "/v1")
	var models struct {
		Data []struct {
			ID                  string `json:"id"`
			MaxModelLen         int    `json:"max_model_len"`
			ContextLength       int    `json:"context_length"`
			LoadedContextLength int    `json:"loaded_context_length"`
		} `json:"data"`
	}
	if rt.getJSON(ctx, http.MethodGet, base+"/models", nil, &models) {
		for _, m := range models.Data {
			if m.ID == model {
				if n := firstPositive(m.LoadedContextLength, m.MaxModelLen, m.ContextLength); n > 0 {
					return n
				}
			}
		}
	}
	var props struct {
		Settings struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if rt.getJSON(ctx, http.MethodGet, root+"/props", nil, &props) && props.Settings.NCtx > 0 {
		return props.Settings.NCtx
	}
	var lms struct {
		Loaded int `json:"loaded_context_length"`
		Max    int `json:"max_context_length"`
	}
	if rt.getJSON(ctx, http.MethodGet, root+"/api/v0/models/"+model, nil, &lms) {
		if n := firstPositive(lms.Loaded, lms.Max); n > 0 {
			return n
		}
	}
	var show struct {
		Parameters string `json:"parameters"`
	}
	body, _ := json.Marshal(map[string]string{"model": model})
	if rt.getJSON(ctx, http.MethodPost, root+"/api/show", body, &show) {
		if m := numCtx.FindStringSubmatch(show.Parameters); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return 0
}

var numCtx = regexp.MustCompile(`(?m)^num_ctx\s+(\d+)`)

func firstPositive(ns ...int) int {
	for _, n := range ns {
		if n > 0 {
			return n
		}
	}
	return 0
}

// getJSON decodes the JSON answer of a request into v; false on any failure.
func (rt *Runtime) getJSON(ctx context.Context, method, url string, body []byte, v any) bool {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return false
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := rt.env.HTTPClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v) == nil
}

// overflowWindow reads the window an overflow error names ("maximum context
// length is 8192 tokens", llama.cpp's "n_ctx":8192, LM Studio's "context
// length of only 8192 tokens"), 0 when it names none.
var overflowWindow = regexp.MustCompile(`(?i)(?:maximum context length is|context length of only|"n_ctx"\s*:\s*)\s*(\d+)`)

// namedWindow is the window an overflow error names, 0 when none.
func namedWindow(msg string) int {
	m := overflowWindow.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 512 {
		return 0
	}
	return n
}

// learnWindow remembers the window an overflow error of the agent's server
// named, when no window is configured: the next budget uses it.
func (rt *Runtime) learnWindow(a config.Agent, n int) {
	if ch := rt.env.Config().ResolvedChat(a); n > 0 && ch.ContextWindow == 0 {
		rt.windows.Store(windowKey(ch.BaseURL, ch.Model), n)
	}
}
