package config

import (
	"errors"
	"strings"
	"testing"
)

func TestMemoryEmbeddingConfig(t *testing.T) {
	c, err := Parse("c.json", []byte(`{"providers": {"openai-compatible": {"baseUrl": "http://127.0.0.1:11434/v1", "apiKeyRef": "local"}},
  "memory": {"embeddingProvider": "openai-compatible", "embeddingModel": "nomic-embed-text"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if u, m, ref, ok := c.ResolvedEmbedding(); !ok || u != "http://127.0.0.1:11434/v1" || m != "nomic-embed-text" || ref != "local" {
		t.Fatalf("ResolvedEmbedding() = %q %q %q %v", u, m, ref, ok)
	}
	c, err = Parse("c.json", []byte(`{"memory": {"embeddingProvider": "openai", "embeddingModel": "text-embedding-3-small", "embeddingBaseUrl": "http://emb/v1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if u, _, ref, _ := c.ResolvedEmbedding(); u != "http://emb/v1" || ref != "openai" {
		t.Fatalf("override: %q %q", u, ref)
	}
	if c, _ := Parse("c.json", []byte(`{}`)); c != nil {
		if _, _, _, ok := c.ResolvedEmbedding(); ok {
			t.Fatal("embeddings configured by default")
		}
	}
	for _, tc := range []struct{ body, field, msg string }{
		{`{"memory": {
  "embeddingProvider": "claude-cli", "embeddingModel": "x"}}`, "memory.embeddingProvider", "OpenAI-compatible"},
		{`{"memory": {
  "embeddingProvider": "openai"}}`, "memory.embeddingModel", "embeddingModel is required"},
		{`{"memory": {
  "embeddingModel": "nomic-embed-text"}}`, "memory.embeddingProvider", "embeddingProvider is required"},
	} {
		_, err := Parse("c.json", []byte(tc.body))
		var ce *Error
		if !errors.As(err, &ce) || ce.Field != tc.field || ce.Line != 2 || !strings.Contains(ce.Msg, tc.msg) {
			t.Errorf("%s: err %v, want %s at line 2 saying %q", tc.body, err, tc.field, tc.msg)
		}
	}
}
