// Package memory owns the user's memory: plain Markdown notes kept in a
// workspace folder (Root/memory/MEMORY.md for long-term facts and
// Root/memory/YYYY-MM-DD.md for daily notes) that the user may also open and
// edit in any editor, plus a derived SQLite FTS5 index used to search them.
//
// The Markdown files are the source of truth. The index (Options.IndexPath)
// is derived data: it may be deleted at any time and is rebuilt from the
// files by Open. Search always reflects what is on disk: Write updates the
// index before it returns, a filesystem watcher (fsnotify) re-indexes files
// created, edited, renamed or deleted by other programs within
// Options.Debounce (50 ms by default), and Open reconciles changes made while
// the service was stopped (mtime + size, then a content hash).
//
// Search (search.go) matches stems, weighs stop words down and adds WordNet
// synonyms (package wordnet); for questions it prefers statements of a fact
// over mentions and the newest statement of a fact (update.go); with an
// Options.Embedder it also ranks by meaning (embed.go, embedded in the
// background, which PauseEmbedding pauses). SearchAny fuses the results of
// several phrasings of one question (fuse.go).
//
// Every line range this package reports (Result.LineStart/LineEnd,
// Range.LineStart/LineEnd) is 1-based and inclusive and names lines of the
// file as it was indexed; "\r\n" counts as one line break and a final line
// break does not start an extra line.
//
// The package needs SQLite's FTS5 module: build with -tags sqlite_fts5.
// Without it Open fails with an error that says so.
//
// # Concurrency
//
// A *Store is safe for concurrent use by many goroutines. Writes to one file
// are serialised by a per-file mutex and never interleave; writes to
// different files proceed in parallel. The index has exactly one writer
// connection (used by Write, the watcher and reconciliation) and a small
// pool of read-only connections for Search, so searches never wait for
// indexing. Only one Store may own a workspace's index at a time: Open takes
// an exclusive lock on IndexPath+".lock" and fails with ErrLocked if another
// process (or another Store) holds it. Close stops the watcher, waits for it,
// and closes the index; calls after Close return ErrClosed.
//
// # Durability
//
// Write appends by rewriting the whole file to a temporary file in the same
// folder, fsyncing it, and renaming it over the original (then fsyncing the
// folder). A crash at any moment therefore leaves either the old file or the
// new one, never a torn one; see writeFileAtomic for why this was chosen over
// O_APPEND.
package memory
