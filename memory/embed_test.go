//go:build sqlite_fts5

package memory_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"jarvis/internal/embedpeer"
	"jarvis/memory"
	"jarvis/memory/wordnet"
	"jarvis/service/llm"
)

var clock = func() time.Time { return time.Date(2026, 2, 11, 10, 0, 0, 0, time.Local) }

// embedEnv is a memory workspace whose embeddings come from the scripted
// embedding server over real HTTP, through the service's go-openai client.
type embedEnv struct {
	root string
	peer *embedpeer.Peer
	url  string
}

func newEmbedEnv(t *testing.T) *embedEnv {
	t.Helper()
	wn, err := wordnet.Open(wordnet.DefaultDir)
	if err != nil {
		t.Fatalf("%v (scripts/setup.sh installs wordnet-base)", err)
	}
	t.Cleanup(func() { wn.Close() })
	peer := embedpeer.New(wn, 64)
	srv := httptest.NewServer(peer)
	t.Cleanup(srv.Close)
	return &embedEnv{root: t.TempDir(), peer: peer, url: srv.URL + "/v1"}
}

func (e *embedEnv) open(t *testing.T, model string, mod func(*memory.Options)) *memory.Store {
	t.Helper()
	opts := memory.Options{Root: e.root, Now: clock, DisableWatcher: true, WordNetDir: "-",
		Embedder: llm.NewEmbedder(llm.OpenAIOptions{BaseURL: e.url}, model)}
	if mod != nil {
		mod(&opts)
	}
	s, err := memory.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func writeNote(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(p), 0o700)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// embedded waits until the background embedding has caught up with the
// index (or reports an error) and returns its status.
func embedded(t *testing.T, s *memory.Store, total int) memory.EmbeddingStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := s.EmbeddingStatus()
		if st.Total == total && st.Embedded == total {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("embedding status %+v, want %d of %d", st, total, total)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With an embedding model, a note is found by meaning where no word (and,
// with synonyms off, no synonym) matches; line ranges stay exact.
func TestHybridSearchFindsByMeaning(t *testing.T) {
	e := newEmbedEnv(t)
	writeNote(t, e.root, "memory/notes.md", "# Health\n\nSaw the physician about my knee.\n\nBought new running shoes.\n")
	s := e.open(t, "m1", nil)
	embedded(t, s, 2)
	if got := s.Retrieval(); got != "hybrid" {
		t.Fatalf("Retrieval() = %q, want hybrid", got)
	}
	res, err := s.Search(context.Background(), "doctor", "", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || !strings.Contains(res[0].Excerpt, "physician") || res[0].Path != "memory/notes.md" || res[0].LineStart != 1 || res[0].LineEnd != 3 {
		t.Fatalf("got %+v, want the physician note (lines 1-3) first", res)
	}
	// Without the model the same query finds nothing: the hit came from the vectors.
	root := t.TempDir()
	writeNote(t, root, "memory/notes.md", "Saw the physician about my knee.\n")
	plain, err := memory.Open(context.Background(), memory.Options{Root: root, Now: clock, DisableWatcher: true, WordNetDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if res, _ := plain.Search(context.Background(), "doctor", "", 5); len(res) != 0 {
		t.Fatalf("keyword-only search found %+v", res)
	}
	if got := plain.Retrieval(); got != "keyword" {
		t.Fatalf("Retrieval() = %q without a model and without WordNet", got)
	}
}

// Only new text is embedded: appending one entry to a note embeds one
// chunk, and a model change recomputes everything.
func TestEmbeddingsAreIncremental(t *testing.T) {
	e := newEmbedEnv(t)
	writeNote(t, e.root, "memory/2026-02-11.md", "# 2026-02-11\n\nFirst entry.\n\nSecond entry.\n\nThird entry.\n")
	s := e.open(t, "m1", nil)
	embedded(t, s, 3)
	before := e.peer.Texts.Load()
	if _, err := s.Write(context.Background(), memory.TargetDaily, "Fourth entry about the garden."); err != nil {
		t.Fatal(err)
	}
	embedded(t, s, 4)
	if n := e.peer.Texts.Load() - before; n != 1 {
		t.Fatalf("appending one entry embedded %d texts, want 1", n)
	}
	s.Close()
	before = e.peer.Texts.Load()
	s = e.open(t, "m1", nil)
	embedded(t, s, 4)
	if n := e.peer.Texts.Load() - before; n != 0 {
		t.Fatalf("reopening embedded %d texts, want 0 (vectors are stored)", n)
	}
	s.Close()
	s = e.open(t, "m2", nil)
	if st := embedded(t, s, 4); st.Model != "m2" {
		t.Fatalf("status %+v", st)
	}
	if n := e.peer.Texts.Load() - before; n != 4 {
		t.Fatalf("a new model embedded %d texts, want all 4", n)
	}
}

// When the model cannot be reached, search is keyword-only and says so,
// nothing fails, and embedding catches up once the model is back.
func TestEmbeddingServerDown(t *testing.T) {
	e := newEmbedEnv(t)
	e.peer.Fail.Store(true)
	writeNote(t, e.root, "memory/notes.md", "The dentist is Dr. Okafor.\n")
	s := e.open(t, "m1", nil)
	deadline := time.Now().Add(10 * time.Second)
	for s.EmbeddingStatus().Error == "" {
		if time.Now().After(deadline) {
			t.Fatal("no embedding error reported while the server fails")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := s.Retrieval(); got != "keyword" {
		t.Fatalf("Retrieval() = %q while the model is down", got)
	}
	res, err := s.Search(context.Background(), "dentist", "", 5)
	if err != nil || len(res) != 1 {
		t.Fatalf("keyword search while the model is down: %+v, %v", res, err)
	}
	if _, err := s.Write(context.Background(), memory.TargetLongTerm, "Prefers tea."); err != nil {
		t.Fatalf("write while the model is down: %v", err)
	}
	e.peer.Fail.Store(false)
	if _, err := s.Write(context.Background(), memory.TargetLongTerm, "Prefers green tea."); err != nil {
		t.Fatal(err)
	}
	embedded(t, s, 3) // notes.md, MEMORY.md's title with its first entry, the second entry
	if got := s.Retrieval(); got != "hybrid" {
		t.Fatalf("Retrieval() = %q after the model came back", got)
	}
}
