package memory

import "errors"

// Sentinel errors. Callers match them with errors.Is; the HTTP layer maps
// ErrInvalidTarget, ErrInvalidPath, ErrInvalidContent, ErrInvalidQuery and ErrInvalidRange to
// 400, ErrTooLarge to 413 and ErrNotFound to 404.
var (
	// ErrInvalidTarget: Write's target is not "long_term" or "daily", or
	// Search's kind is not "", "long_term" or "daily".
	ErrInvalidTarget = errors.New("memory: invalid target")
	// ErrInvalidPath: a path is absolute, contains "..", is not a .md file
	// under memory/, or resolves (through a symlink) outside the workspace.
	ErrInvalidPath = errors.New("memory: invalid path")
	// ErrInvalidContent: Write's content is empty, not UTF-8, or contains NUL.
	ErrInvalidContent = errors.New("memory: invalid content")
	// ErrInvalidQuery: SearchAny got more than MaxPhrasings phrasings.
	ErrInvalidQuery = errors.New("memory: invalid query")
	// ErrInvalidRange: Get's line range is empty or starts past the end.
	ErrInvalidRange = errors.New("memory: invalid line range")
	// ErrTooLarge: an entry exceeds MaxWriteBytes or would grow a file past
	// MaxFileBytes.
	ErrTooLarge = errors.New("memory: too large")
	// ErrNotFound: the file does not exist.
	ErrNotFound = errors.New("memory: not found")
	// ErrLocked: another Store already owns this index.
	ErrLocked = errors.New("memory: index is locked by another store")
	// ErrClosed: the Store has been closed.
	ErrClosed = errors.New("memory: store closed")
)
