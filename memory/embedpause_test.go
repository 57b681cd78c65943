//go:build sqlite_fts5

package memory_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"jarvis/internal/embedpeer"
	"jarvis/internal/testwait"
	"jarvis/memory"
	"jarvis/memory/wordnet"
	"jarvis/service/llm"
)

// While the background embedding runs (here: the embedding server holds
// its first answer, as a busy local model does) keyword search answers at
// once and says it is keyword search; a pause stops the embedding after
// the batch in hand and search uses the vectors made so far; resuming
// embeds the rest.
func TestKeywordSearchDuringEmbeddingAndPause(t *testing.T) {
	wn, err := wordnet.Open(wordnet.DefaultDir)
	if err != nil {
		t.Fatalf("%v (scripts/setup.sh installs wordnet-base)", err)
	}
	defer wn.Close()
	peer := embedpeer.New(wn, 64)
	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	defer open()
	held := make(chan struct{}, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case held <- struct{}{}:
		default:
		}
		<-gate
		peer.ServeHTTP(w, r)
	}))
	defer srv.Close()

	root := t.TempDir()
	var b strings.Builder
	b.WriteString("# 2026-02-10\n")
	for i := range 100 {
		fmt.Fprintf(&b, "\nNote %d about the garden shed and the tomatoes.\n", i)
	}
	b.WriteString("\nSaw the physician about my knee.\n")
	writeNote(t, root, "memory/2026-02-10.md", b.String())
	s, err := memory.Open(context.Background(), memory.Options{Root: root, Now: clock, DisableWatcher: true, WordNetDir: "-",
		Embedder: llm.NewEmbedder(llm.OpenAIOptions{BaseURL: srv.URL + "/v1"}, "concepts-64")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	select {
	case <-held: // the first batch is at the server
	case <-time.After(10 * time.Second):
		t.Fatal("the background embedding never called the server")
	}
	res, err := s.Search(context.Background(), "physician knee", "", 5)
	if err != nil || len(res) != 1 || !strings.Contains(res[0].Excerpt, "physician") {
		t.Fatalf("keyword search during the embedding: %v %+v", err, res)
	}
	if r := s.Retrieval(); r != "keyword" {
		t.Fatalf("retrieval %q while nothing is embedded, want keyword", r)
	}
	st := s.EmbeddingStatus()
	if st.Total != 101 || st.Embedded != 0 || st.Paused {
		t.Fatalf("status during the first batch %+v, want 0 of 101", st)
	}

	s.PauseEmbedding(true)
	open()
	testwait.Until(t, "the pause after the first batch", 10*time.Second, func() bool {
		st = s.EmbeddingStatus()
		return st.Paused && st.Embedded > 0 && s.Retrieval() == "hybrid"
	})
	if st.Embedded >= st.Total {
		t.Fatalf("paused status %+v: everything embedded, want the pause to stop it after one batch", st)
	}
	if res, err := s.Search(context.Background(), "physician knee", "", 5); err != nil || len(res) == 0 || !strings.Contains(res[0].Excerpt, "physician") {
		t.Fatalf("search while paused: %v %+v", err, res)
	}

	s.PauseEmbedding(false)
	testwait.Until(t, "the rest embedded after resuming", 10*time.Second, func() bool {
		st = s.EmbeddingStatus()
		return !st.Paused && st.Embedded == 101 && st.Total == 101
	})
}

// The embedding model is chosen while the store runs (the window's "Use …
// for memory"): keyword search before it, meaning after its background
// pass, keyword again when it is turned off; a second model recomputes
// every vector.
func TestSetEmbedderWhileRunning(t *testing.T) {
	wn, err := wordnet.Open(wordnet.DefaultDir)
	if err != nil {
		t.Fatalf("%v (scripts/setup.sh installs wordnet-base)", err)
	}
	defer wn.Close()
	srv := httptest.NewServer(embedpeer.New(wn, 64))
	defer srv.Close()
	root := t.TempDir()
	writeNote(t, root, "memory/2026-02-10.md", "# 2026-02-10\n\nSaw the physician about my knee.\n\nRepotted the tomatoes in the garden shed.\n")
	s, err := memory.Open(context.Background(), memory.Options{Root: root, Now: clock, DisableWatcher: true, WordNetDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r, st := s.Retrieval(), s.EmbeddingStatus(); r != "keyword" || st.Model != "" {
		t.Fatalf("before a model: retrieval %q status %+v", r, st)
	}
	for _, model := range []string{"concepts-64", "concepts-64b"} {
		if err := s.SetEmbedder(llm.NewEmbedder(llm.OpenAIOptions{BaseURL: srv.URL + "/v1"}, model)); err != nil {
			t.Fatal(err)
		}
		testwait.Until(t, "every chunk embedded by "+model, 20*time.Second, func() bool {
			st := s.EmbeddingStatus()
			return st.Model == model && st.Total > 0 && st.Embedded == st.Total && s.Retrieval() == "hybrid"
		})
		res, err := s.Search(context.Background(), "doctor visit", "", 3)
		if err != nil || len(res) == 0 || !strings.Contains(res[0].Excerpt, "physician") {
			t.Fatalf("search by meaning with %s: %v %+v", model, err, res)
		}
	}
	if err := s.SetEmbedder(nil); err != nil {
		t.Fatal(err)
	}
	if r, st := s.Retrieval(), s.EmbeddingStatus(); r != "keyword" || st != (memory.EmbeddingStatus{}) {
		t.Fatalf("after turning it off: retrieval %q status %+v", r, st)
	}
	if res, err := s.Search(context.Background(), "physician knee", "", 3); err != nil || len(res) != 1 {
		t.Fatalf("keyword search after turning embeddings off: %v %+v", err, res)
	}
	s.Close()
	if err := s.SetEmbedder(nil); err == nil {
		t.Fatal("SetEmbedder on a closed store did not fail")
	}
}
