package app

import (
	"net/http"
	"strings"

	"jarvis/api"
)

// MemoryStatus is GET /v1/memory/embeddings: how memory search finds notes
// (by meaning, or by their words) and how far the background embedding is.
func (a *App) MemoryStatus() (api.MemoryRetrieval, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	var out api.MemoryRetrieval
	if err := a.c.Do(ctx, http.MethodGet, "/v1/memory/embeddings", nil, &out); err != nil {
		return out, friendly(err)
	}
	return out, nil
}

// PauseMemoryEmbedding pauses (true) or resumes the background embedding;
// what is embedded stays in use.
func (a *App) PauseMemoryEmbedding(paused bool) (api.MemoryRetrieval, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	var out api.MemoryRetrieval
	if err := a.c.Do(ctx, http.MethodPost, "/v1/memory/embeddings", api.MemoryEmbeddingsRequest{Paused: &paused}, &out); err != nil {
		return out, friendly(err)
	}
	return out, nil
}

// UseMemoryEmbedding makes memory find notes by meaning with model of the
// local server at baseURL ("Use nomic-embed-text for memory"), or by their
// words only when model is empty; then reports the new state.
func (a *App) UseMemoryEmbedding(baseURL, model string) (api.MemoryRetrieval, error) {
	ctx, cancel := a.reqCtx()
	defer cancel()
	req := api.SetEmbeddingRequest{BaseURL: strings.TrimSpace(baseURL), Model: strings.TrimSpace(model)}
	if err := a.c.Do(ctx, http.MethodPut, "/v1/memory/embeddings", req, nil); err != nil {
		return api.MemoryRetrieval{}, friendly(err)
	}
	var out api.MemoryRetrieval
	if err := a.c.Do(ctx, http.MethodGet, "/v1/memory/embeddings", nil, &out); err != nil {
		return out, friendly(err)
	}
	return out, nil
}
