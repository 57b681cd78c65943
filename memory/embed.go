package memory

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Embedder computes one vector per text: an OpenAI-compatible
// /v1/embeddings endpoint (service/llm.Embedder). Model names the model;
// vectors of another model are thrown away.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Model() string
}

// Hybrid retrieval. With Options.Embedder set, every chunk gets a vector,
// computed in the background (embedLoop) after the index changes (a Write,
// an edit seen by the watcher, reconciliation at Open) and stored in the
// index (table embeddings, keyed by the chunk text's hash so that
// re-indexing a file does not recompute its unchanged chunks). Search
// embeds the query, scans every vector (exact cosine; 17k chunks of 256
// dimensions take about 2 ms, see docs/BENCHMARKS.md) and adds the best
// vectorPool matches to the keyword candidates, each candidate scoring its
// normalised BM25 plus vectorWeight times its cosine. Without an embedder,
// or while the model cannot be reached, search is keyword-only and says so
// (Retrieval).
const (
	embedBatch   = 64
	vectorPool   = 50
	vectorWeight = 0.5
	embedRetry   = 30 * time.Second
	queryTimeout = 2 * time.Second
	publishEvery = 2 * time.Second // during a pass: Search uses the vectors so far, the status counts them
)

// EmbeddingStatus is the progress of the background embedding.
type EmbeddingStatus struct {
	Model    string `json:"model"`
	Embedded int    `json:"embedded"` // chunks whose vector Search uses
	Total    int    `json:"total"`    // chunks in the index
	Paused   bool   `json:"paused,omitempty"`
	Error    string `json:"error,omitempty"`
}

type embedState struct {
	kick   chan struct{}
	cur    atomic.Pointer[embedRun] // the embedder in use and its loop; nil: keyword search
	swap   sync.Mutex               // serialises SetEmbedder
	snap   atomic.Pointer[vecIndex]
	paused atomic.Bool

	mu     sync.Mutex
	status EmbeddingStatus
	qcache map[string][]float32
}

// embedRun is one embedder's background loop.
type embedRun struct {
	e      Embedder
	cancel context.CancelFunc
	done   chan struct{}
}

// embedder is the embedding model in use, nil without one.
func (s *Store) embedder() Embedder {
	if r := s.emb.cur.Load(); r != nil {
		return r.e
	}
	return nil
}

// SetEmbedder changes the embedding model while the store runs (nil: keyword
// search only). The old model's loop stops first; vectors of another model
// are recomputed in the background with progress (EmbeddingStatus), and
// keyword search answers throughout.
func (s *Store) SetEmbedder(e Embedder) error {
	if s.closed() {
		return ErrClosed
	}
	s.emb.swap.Lock()
	defer s.emb.swap.Unlock()
	if old := s.emb.cur.Swap(nil); old != nil {
		old.cancel()
		<-old.done
	}
	s.emb.snap.Store(nil)
	s.emb.paused.Store(false)
	s.emb.mu.Lock()
	s.emb.status, s.emb.qcache = EmbeddingStatus{}, nil
	s.emb.mu.Unlock()
	if e != nil {
		s.startEmbedding(e)
	}
	return nil
}

// startEmbedding runs e's loop until Close or the next SetEmbedder.
func (s *Store) startEmbedding(e Embedder) {
	ctx, cancel := s.untilClose()
	r := &embedRun{e: e, cancel: cancel, done: make(chan struct{})}
	s.emb.mu.Lock()
	s.emb.status.Model = e.Model()
	s.emb.mu.Unlock()
	s.emb.cur.Store(r)
	s.wg.Add(1)
	go func() {
		defer close(r.done)
		defer cancel()
		s.embedLoop(ctx, e)
	}()
}

// vecIndex is a snapshot of the chunks that have vectors, for the scan:
// one contiguous array (dim floats per chunk, unit length), which the scan
// reads front to back.
type vecIndex struct {
	ids  []int64
	dim  int
	data []float32
}

func (idx *vecIndex) add(id int64, v []float32) {
	if idx.dim == 0 {
		idx.dim = len(v)
	}
	if len(v) != idx.dim {
		return // another size: a model that changed under the same name; recomputed later
	}
	idx.ids = append(idx.ids, id)
	idx.data = append(idx.data, v...)
}

// textKey is where a chunk text's embedding is stored.
func textKey(text string) int64 {
	h := fnv.New64a()
	h.Write([]byte(text))
	return int64(h.Sum64())
}

func (s *Store) kickEmbedder() {
	select {
	case s.emb.kick <- struct{}{}:
	default:
	}
}

// EmbeddingStatus reports the background embedding's progress (zero
// without an embedder).
func (s *Store) EmbeddingStatus() EmbeddingStatus {
	s.emb.mu.Lock()
	defer s.emb.mu.Unlock()
	return s.emb.status
}

// PauseEmbedding pauses (true) or resumes (false) the background
// embedding. A pause takes effect after the batch being embedded; the
// vectors made so far are used by Search, and chunks without one are found
// by their words only. Keyword search works throughout.
func (s *Store) PauseEmbedding(pause bool) {
	if s.embedder() == nil {
		return
	}
	s.emb.paused.Store(pause)
	s.emb.mu.Lock()
	s.emb.status.Paused = pause
	s.emb.mu.Unlock()
	if !pause {
		s.kickEmbedder()
	}
}

// Retrieval says how Search matches notes: "hybrid" (keyword and
// embeddings), "keyword+synonyms" (WordNet) or "keyword".
func (s *Store) Retrieval() string {
	if s.embedder() != nil {
		if idx := s.emb.snap.Load(); idx != nil && len(idx.ids) > 0 && s.EmbeddingStatus().Error == "" {
			return "hybrid"
		}
	}
	if ok, _ := s.WordNet(); ok {
		return "keyword+synonyms"
	}
	return "keyword"
}

// embedLoop keeps the vectors in step with the index, with e, until ctx
// ends (Close, or another embedder).
func (s *Store) embedLoop(ctx context.Context, e Embedder) {
	defer s.wg.Done()
	byKey, err := s.loadEmbeddings(ctx, e)
	if err != nil {
		s.setEmbedError(err)
		return
	}
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	for {
		if err := s.embedPass(ctx, e, byKey); err != nil {
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("memory embeddings", "err", err)
			s.setEmbedError(err)
			retry.Reset(embedRetry)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.emb.kick:
		case <-retry.C:
		}
	}
}

func (s *Store) setEmbedError(err error) {
	s.emb.mu.Lock()
	s.emb.status.Error = err.Error()
	s.emb.mu.Unlock()
}

// loadEmbeddings drops vectors of another model and reads the rest.
func (s *Store) loadEmbeddings(ctx context.Context, e Embedder) (map[int64][]float32, error) {
	model := e.Model()
	s.emb.mu.Lock()
	s.emb.status.Model = model
	s.emb.mu.Unlock()
	var have string
	err := s.wdb.QueryRowContext(ctx, `SELECT v FROM meta WHERE k = 'embedding_model'`).Scan(&have)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if have != model {
		if have != "" {
			s.log.Info("memory embedding model changed, recomputing vectors", "from", have, "to", model)
		}
		if _, err := s.wdb.ExecContext(ctx, `DELETE FROM embeddings; INSERT OR REPLACE INTO meta(k, v) VALUES ('embedding_model', ?)`, model); err != nil {
			return nil, err
		}
	}
	rows, err := s.wdb.QueryContext(ctx, `SELECT key, vec FROM embeddings`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byKey := map[int64][]float32{}
	for rows.Next() {
		var k int64
		var b []byte
		if err := rows.Scan(&k, &b); err != nil {
			return nil, err
		}
		byKey[k] = decodeVec(b)
	}
	return byKey, rows.Err()
}

// embedPass embeds every chunk text that has no vector yet, in batches,
// then publishes a new snapshot and forgets vectors no chunk uses.
func (s *Store) embedPass(ctx context.Context, e Embedder, byKey map[int64][]float32) error {
	if err := s.countEmbedded(ctx); err != nil {
		return err
	}
	published := time.Now()
	for {
		if s.emb.paused.Load() {
			break // the vectors so far are published below
		}
		if time.Since(published) > publishEvery {
			// A long pass (a first embedding of many notes) shows its
			// progress and lets Search use what is done.
			if err := s.publishVectors(ctx, byKey); err != nil {
				return err
			}
			published = time.Now()
		}
		rows, err := s.wdb.QueryContext(ctx, `SELECT c.ekey, MIN(c.text) FROM chunks c
			WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.key = c.ekey) GROUP BY c.ekey LIMIT ?`, embedBatch)
		if err != nil {
			return err
		}
		var keys []int64
		var texts []string
		for rows.Next() {
			var k int64
			var t string
			if err := rows.Scan(&k, &t); err != nil {
				rows.Close()
				return err
			}
			keys, texts = append(keys, k), append(texts, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(keys) == 0 {
			break
		}
		vecs, err := e.Embed(ctx, texts)
		if err != nil {
			return err
		}
		if len(vecs) != len(texts) {
			return fmt.Errorf("embedding model returned %d vectors for %d texts", len(vecs), len(texts))
		}
		tx, err := s.wdb.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for i, k := range keys {
			v := normalize(vecs[i])
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO embeddings(key, vec) VALUES (?, ?)`, k, encodeVec(v)); err != nil {
				tx.Rollback()
				return err
			}
			byKey[k] = v
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		s.dirty.Store(true)
	}
	return s.publishVectors(ctx, byKey)
}

// countEmbedded sets the progress at the start of a pass: the chunks in
// the index, and of them those whose vector Search uses (the snapshot).
func (s *Store) countEmbedded(ctx context.Context) error {
	var total int
	if err := s.wdb.QueryRowContext(ctx, `SELECT COUNT(*) FROM chunks`).Scan(&total); err != nil {
		return err
	}
	done := 0
	if idx := s.emb.snap.Load(); idx != nil {
		done = len(idx.ids)
	}
	s.emb.mu.Lock()
	s.emb.status.Embedded, s.emb.status.Total = min(done, total), total
	s.emb.mu.Unlock()
	return nil
}

// publishVectors builds the snapshot Search scans from the chunks now in
// the index and drops vectors of texts no longer indexed.
func (s *Store) publishVectors(ctx context.Context, byKey map[int64][]float32) error {
	rows, err := s.wdb.QueryContext(ctx, `SELECT id, ekey FROM chunks`)
	if err != nil {
		return err
	}
	idx := &vecIndex{}
	used := make(map[int64]bool, len(byKey))
	total := 0
	for rows.Next() {
		var id, k int64
		if err := rows.Scan(&id, &k); err != nil {
			rows.Close()
			return err
		}
		total++
		if v, ok := byKey[k]; ok {
			idx.add(id, v)
			used[k] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	var stale []int64
	for k := range byKey {
		if !used[k] {
			stale = append(stale, k)
		}
	}
	if len(stale) > 0 {
		tx, err := s.wdb.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		for _, k := range stale {
			if _, err := tx.ExecContext(ctx, `DELETE FROM embeddings WHERE key = ?`, k); err != nil {
				tx.Rollback()
				return err
			}
			delete(byKey, k)
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	s.emb.snap.Store(idx)
	s.emb.mu.Lock()
	s.emb.status.Embedded, s.emb.status.Total, s.emb.status.Error = len(idx.ids), total, ""
	s.emb.mu.Unlock()
	return nil
}

// queryVector embeds a query (cached: agents repeat queries).
func (s *Store) queryVector(ctx context.Context, q string) ([]float32, error) {
	s.emb.mu.Lock()
	v, ok := s.emb.qcache[q]
	s.emb.mu.Unlock()
	if ok {
		return v, nil
	}
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	e := s.embedder()
	if e == nil {
		return nil, errors.New("no embedding model")
	}
	vecs, err := e.Embed(ctx, []string{q})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("embedding model returned %d vectors for 1 text", len(vecs))
	}
	v = normalize(vecs[0])
	s.emb.mu.Lock()
	if s.emb.qcache == nil || len(s.emb.qcache) >= 1024 {
		s.emb.qcache = map[string][]float32{}
	}
	s.emb.qcache[q] = v
	s.emb.mu.Unlock()
	return v, nil
}

type vecHit struct {
	id  int64
	cos float32
}

// top returns the n chunks closest to q (unit length), best first: an
// exact scan.
func (idx *vecIndex) top(q []float32, n int) []vecHit {
	if len(q) != idx.dim {
		return nil
	}
	var out []vecHit
	for i := range idx.ids {
		d := dot(idx.data[i*idx.dim:(i+1)*idx.dim], q)
		if len(out) == n && d <= out[n-1].cos {
			continue
		}
		k := sort.Search(len(out), func(k int) bool { return out[k].cos < d })
		if len(out) < n {
			out = append(out, vecHit{})
		}
		copy(out[k+1:], out[k:len(out)-1])
		out[k] = vecHit{idx.ids[i], d}
	}
	return out
}

// dot of two vectors of the same length, four lanes at a time (which lets
// the compiler drop bounds checks and overlap the additions).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// vectorHits finds the chunks closest to q in meaning; nil without an
// embedder, before any vector exists, or when the model cannot be reached
// (logged: search goes on keyword-only).
func (s *Store) vectorHits(ctx context.Context, q string) []vecHit {
	if s.embedder() == nil {
		return nil
	}
	idx := s.emb.snap.Load()
	if idx == nil || len(idx.ids) == 0 {
		return nil
	}
	qv, err := s.queryVector(ctx, q)
	if err != nil {
		s.log.Warn("memory search without embeddings", "err", err)
		return nil
	}
	return idx.top(qv, vectorPool)
}

// fuse merges keyword hits and vector hits: each candidate scores its BM25
// score divided by the best one's, plus vectorWeight times its cosine.
// Chunks found only by vector are read from the index (and filtered by
// kind).
func (s *Store) fuse(ctx context.Context, hits []hit, vhits []vecHit, kind string) ([]hit, error) {
	best := 0.0
	for _, h := range hits {
		best = max(best, h.score)
	}
	at := make(map[int64]int, len(hits))
	for i := range hits {
		if best > 0 {
			hits[i].score /= best
		}
		at[hits[i].id] = i
	}
	var missing []any
	cos := map[int64]float32{}
	for _, v := range vhits {
		if i, ok := at[v.id]; ok {
			hits[i].score += vectorWeight * float64(max(0, v.cos))
			continue
		}
		missing = append(missing, v.id)
		cos[v.id] = v.cos
	}
	if len(missing) == 0 {
		return hits, nil
	}
	q := `SELECT c.id, c.file_id, f.path, f.kind, f.day, c.line_start, c.line_end, c.text
		FROM chunks c JOIN files f ON f.id = c.file_id WHERE c.id IN (?` + strings.Repeat(", ?", len(missing)-1) + `)`
	args := missing
	if kind != "" {
		q += ` AND f.kind = ?`
		args = append(args, kind)
	}
	rows, err := s.rdb.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("memory: search: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h hit
		if err := rows.Scan(&h.id, &h.file, &h.path, &h.kind, &h.day, &h.lineStart, &h.lineEnd, &h.text); err != nil {
			return nil, fmt.Errorf("memory: search: %w", err)
		}
		h.score = vectorWeight * float64(max(0, cos[h.id]))
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

func normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(n))
	for i, x := range v {
		out[i] = x * inv
	}
	return out
}

func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
