package memory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver

	"jarvis/memory/wordnet"
)

// Options configures a Store. Zero values take the documented defaults.
type Options struct {
	// Root is the workspace root (the data dir); notes live in Root/memory/.
	// Required.
	Root string
	// IndexPath is the SQLite FTS5 index file: derived data, rebuilt from
	// the notes if missing, corrupt or from another schema version.
	// Default Root/memory-index.db.
	IndexPath string
	// Logger receives warnings about unreadable files and watcher trouble.
	// Default: discard.
	Logger *slog.Logger
	// Now is the clock: it picks the daily file name (local date) and the
	// age of daily notes for the recency boost. Default time.Now.
	Now func() time.Time
	// MaxWriteBytes caps one Write's content. Default 64 KiB.
	MaxWriteBytes int
	// MaxFileBytes caps a memory file: Write refuses to grow a file past it
	// and larger files found on disk are not indexed (a warning is logged).
	// Default 8 MiB.
	MaxFileBytes int64
	// Debounce is how long the watcher waits for a burst of events on a file
	// to settle before re-indexing it. Default 50 ms.
	Debounce time.Duration
	// RecencyWeight is the extra score a daily note dated today gets, as a
	// fraction of its BM25 score; it halves every RecencyHalfLife.
	// Default 0.5; negative disables the boost.
	RecencyWeight float64
	// RecencyHalfLife defaults to 30 days.
	RecencyHalfLife time.Duration
	// WordNetDir holds the WordNet database used to search for synonyms of
	// the query's words. Default wordnet.DefaultDir (Debian's wordnet-base);
	// "-" turns synonyms off. Search works without it, on the words alone.
	WordNetDir string
	// Embedder, if set, gives every chunk a vector (in the background) and
	// makes Search hybrid: keyword and meaning (embed.go). Default none:
	// keyword search only.
	Embedder Embedder
	// DisableWatcher turns off live re-indexing (changes made by other
	// programs are then only seen by the next Open). For tests and tools.
	DisableWatcher bool
}

func (o *Options) fill() error {
	if o.Root == "" {
		return errors.New("memory: Options.Root is required")
	}
	root, err := filepath.Abs(o.Root)
	if err != nil {
		return fmt.Errorf("memory: root: %w", err)
	}
	o.Root = root
	if o.IndexPath == "" {
		o.IndexPath = filepath.Join(root, "memory-index.db")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxWriteBytes <= 0 {
		o.MaxWriteBytes = 64 << 10
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 8 << 20
	}
	if o.Debounce <= 0 {
		o.Debounce = 50 * time.Millisecond
	}
	if o.RecencyWeight == 0 {
		o.RecencyWeight = 0.5
	}
	if o.WordNetDir == "" {
		o.WordNetDir = wordnet.DefaultDir
	}
	if o.RecencyHalfLife <= 0 {
		o.RecencyHalfLife = 30 * 24 * time.Hour
	}
	return nil
}

// Store is the memory workspace plus its search index. See the package doc
// for its concurrency rules.
type Store struct {
	opts    Options
	log     *slog.Logger
	root    string // absolute workspace root
	memDir  string // root/memory, as configured
	realMem string // memDir with symlinks resolved

	wdb   *sql.DB     // the one writer connection
	rdb   *sql.DB     // read-only pool for Search
	ckdb  *sql.DB     // WAL checkpoints, off the write path
	dirty atomic.Bool // written since the last checkpoint
	segs  atomic.Bool // written since the last segment merge (mergeLoop)
	lock  *os.File

	locksMu sync.Mutex
	locks   map[string]*sync.Mutex // per relative path: writes and indexing

	watcher *fsnotify.Watcher
	done    chan struct{}
	wg      sync.WaitGroup

	closeOnce sync.Once
	closeErr  error

	syn synonyms
	emb embedState

	promptMu sync.Mutex
	promptAt string // what PromptContext last read: maxBytes, day and the files' identities
	prompt   string // and what it returned
}

// Open creates the workspace folders if needed, opens (or rebuilds) the
// index, reconciles it with the files on disk, and starts the watcher.
// The context bounds reconciliation only.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	s := &Store{
		opts:   opts,
		log:    opts.Logger.With("component", "memory"),
		root:   opts.Root,
		memDir: filepath.Join(opts.Root, memDirName),
		locks:  map[string]*sync.Mutex{},
		done:   make(chan struct{}),
		syn:    synonyms{dir: opts.WordNetDir},
	}
	if err := os.MkdirAll(s.memDir, 0o700); err != nil {
		return nil, fmt.Errorf("memory: create workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(s.memDir)
	if err != nil {
		return nil, fmt.Errorf("memory: resolve workspace: %w", err)
	}
	s.realMem = real
	if err := os.MkdirAll(filepath.Dir(opts.IndexPath), 0o700); err != nil {
		return nil, fmt.Errorf("memory: create index folder: %w", err)
	}
	if s.lock, err = lockFile(opts.IndexPath + ".lock"); err != nil {
		return nil, fmt.Errorf("memory: lock index: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			s.shutdown()
		}
	}()
	if err := s.openIndex(); err != nil {
		return nil, err
	}
	s.removeStaleTemps()
	if !opts.DisableWatcher {
		// Watch before reconciling so that nothing changed during the
		// reconciliation walk is missed; events queue until the loop starts.
		if err := s.startWatcher(); err != nil {
			return nil, err
		}
	}
	if _, err := s.reconcile(ctx, true); err != nil {
		return nil, err
	}
	if s.watcher != nil {
		s.wg.Add(1)
		go s.watchLoop()
	}
	s.wg.Add(1)
	go s.checkpointLoop()
	s.wg.Add(1)
	go s.mergeLoop()
	s.emb.kick = make(chan struct{}, 1)
	if opts.Embedder != nil {
		s.startEmbedding(opts.Embedder)
	}
	ok = true
	return s, nil
}

// untilClose is a context for background loops, cancelled by Close.
func (s *Store) untilClose() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// Close stops the watcher and closes the index. It is safe to call twice.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.shutdown() })
	return s.closeErr
}

func (s *Store) shutdown() error {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	var errs []error
	if s.watcher != nil {
		errs = append(errs, s.watcher.Close())
	}
	s.wg.Wait()
	s.syn.close()
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if s.ckdb != nil {
		errs = append(errs, s.ckdb.Close())
	}
	if s.wdb != nil {
		errs = append(errs, s.wdb.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}

func (s *Store) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// fileLock returns the mutex serialising writes to and indexing of one file.
// Entries are never removed: there is one per file ever touched, a few
// hundred bytes each.
func (s *Store) fileLock(rel string) *sync.Mutex {
	s.locksMu.Lock()
	defer s.locksMu.Unlock()
	m := s.locks[rel]
	if m == nil {
		m = &sync.Mutex{}
		s.locks[rel] = m
	}
	return m
}
