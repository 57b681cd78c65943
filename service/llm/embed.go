package llm

import (
	"context"
	"fmt"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// Embedder computes text embeddings on an OpenAI-compatible
// /v1/embeddings endpoint (OpenAI, Ollama, LM Studio, llama.cpp's server),
// for memory search.
type Embedder struct {
	client *openai.Client
	model  string
}

// NewEmbedder returns an embedder using model at opts.BaseURL.
func NewEmbedder(opts OpenAIOptions, model string) *Embedder {
	cfg := openai.DefaultConfig(opts.APIKey)
	if opts.BaseURL != "" {
		cfg.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	}
	if opts.HTTPClient != nil {
		cfg.HTTPClient = opts.HTTPClient
	}
	return &Embedder{client: openai.NewClientWithConfig(cfg), model: model}
}

// Model is the embedding model's name.
func (e *Embedder) Model() string { return e.model }

// Embed returns one vector per text, in order.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	res, err := e.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: texts, Model: openai.EmbeddingModel(e.model)})
	if err != nil {
		return nil, fmt.Errorf("embeddings (%s): %w", e.model, err)
	}
	out := make([][]float32, len(texts))
	for _, d := range res.Data {
		if d.Index < 0 || d.Index >= len(out) {
			return nil, fmt.Errorf("embeddings (%s): answer index %d for %d inputs", e.model, d.Index, len(texts))
		}
		out[d.Index] = d.Embedding
	}
	for i, v := range out {
		if len(v) == 0 {
			return nil, fmt.Errorf("embeddings (%s): no vector for input %d", e.model, i)
		}
	}
	return out, nil
}
