// Package embedpeer is a scripted OpenAI-compatible embedding server for
// tests and benchmarks: POST /v1/embeddings (and /embeddings) answers with
// deterministic vectors, so that hybrid memory search can be tested against
// a real HTTP peer without a model.
//
// It is NOT a language model. Its vectors are concept hashes: each content
// word of a text contributes a fixed pseudo-random ±1 vector for itself,
// for each of its first WordNet meanings (synsets) and, more weakly, for
// their direct hypernyms; the sum is normalised. Two texts are therefore
// close when they share words or WordNet meanings ("physician" and "doctor"
// share a synset), which is a plausible but much cruder notion of meaning
// than a trained embedding model's. Figures measured with it say how the
// fusion behaves, not how a real model would score.
package embedpeer

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"jarvis/memory"
	"jarvis/memory/wordnet"
)

// Peer serves embeddings. Dim is the vector size.
type Peer struct {
	wn  *wordnet.WordNet
	dim int

	mu    sync.Mutex
	cache map[string][]float32 // per word

	// Texts counts the inputs embedded so far (tests check incremental
	// embedding with it). Requests counts calls.
	Texts, Requests atomic.Int64
	// Fail makes the next calls answer 503 while it is set.
	Fail atomic.Bool
}

// New returns a peer using wn for meanings (nil: words only).
func New(wn *wordnet.WordNet, dim int) *Peer {
	return &Peer{wn: wn, dim: dim, cache: map[string][]float32{}}
}

type request struct {
	Input any    `json:"input"`
	Model string `json:"model"`
}

type datum struct {
	Object    string    `json:"object"`
	Index     int       `json:"index"`
	Embedding []float32 `json:"embedding"`
}

// ServeHTTP implements the OpenAI embeddings endpoint for string inputs.
func (p *Peer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/embeddings") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	p.Requests.Add(1)
	if p.Fail.Load() {
		http.Error(w, `{"error":{"message":"scripted failure","type":"server_error"}}`, http.StatusServiceUnavailable)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	var inputs []string
	switch in := req.Input.(type) {
	case string:
		inputs = []string{in}
	case []any:
		for _, x := range in {
			s, ok := x.(string)
			if !ok {
				http.Error(w, `{"error":{"message":"input must be strings"}}`, http.StatusBadRequest)
				return
			}
			inputs = append(inputs, s)
		}
	default:
		http.Error(w, `{"error":{"message":"input must be a string or a list of strings"}}`, http.StatusBadRequest)
		return
	}
	p.Texts.Add(int64(len(inputs)))
	data := make([]datum, len(inputs))
	for i, text := range inputs {
		data[i] = datum{Object: "embedding", Index: i, Embedding: p.Embed(text)}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": 0, "total_tokens": 0}})
}

// Embed is the vector of text.
func (p *Peer) Embed(text string) []float32 {
	v := make([]float32, p.dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) }) {
		if memory.IsStopWord(w) {
			continue
		}
		for i, x := range p.word(w) {
			v[i] += x
		}
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(n))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

// Concept weights: the word itself, its meanings by rank, hypernyms.
var senseWeights = [3]float32{0.8, 0.5, 0.3}

const hyperWeight = 0.25

func (p *Peer) word(w string) []float32 {
	p.mu.Lock()
	v, ok := p.cache[w]
	p.mu.Unlock()
	if ok {
		return v
	}
	v = make([]float32, p.dim)
	p.add(v, "w:"+w, 1)
	if p.wn != nil {
		if cs, err := p.wn.Concepts(w, len(senseWeights)); err == nil {
			for _, c := range cs {
				wt := senseWeights[min(c.Sense, len(senseWeights)-1)]
				if c.Hyper {
					wt *= hyperWeight
				}
				p.add(v, c.ID, wt)
			}
		}
	}
	p.mu.Lock()
	p.cache[w] = v
	p.mu.Unlock()
	return v
}

// add adds weight times the ±1 vector of feature to v (xorshift seeded by
// the feature's FNV hash).
func (p *Peer) add(v []float32, feature string, weight float32) {
	h := fnv.New64a()
	h.Write([]byte(feature))
	x := h.Sum64() | 1
	for i := range v {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		if x&1 == 0 {
			v[i] += weight
		} else {
			v[i] -= weight
		}
	}
}
