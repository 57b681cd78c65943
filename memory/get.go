package memory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Range is a span of a memory file, as returned by Get.
type Range struct {
	Path       string `json:"path"`
	LineStart  int    `json:"line_start"` // 1-based, inclusive
	LineEnd    int    `json:"line_end"`   // inclusive; may be less than asked if Truncated
	Text       string `json:"text"`       // the lines joined by "\n" (CRLF shown as "\n")
	TotalLines int    `json:"total_lines"`
	Truncated  bool   `json:"truncated,omitempty"` // the range was cut at MaxGetBytes
}

// MaxGetBytes caps the text one Get returns; the range is cut at a line
// boundary (LineEnd says where) and Truncated set.
const MaxGetBytes = 256 << 10

// Get returns lines lineStart..lineEnd (1-based, inclusive) of the memory
// file at path, relative to the workspace (e.g. "memory/2026-02-11.md"), as
// they are on disk now. lineStart <= 0 means 1; lineEnd <= 0 or past the end
// means the last line. An empty file yields an empty Range.
func (s *Store) Get(ctx context.Context, path string, lineStart, lineEnd int) (Range, error) {
	if s.closed() {
		return Range{}, ErrClosed
	}
	rel, err := cleanRel(path)
	if err != nil {
		return Range{}, err
	}
	real, err := s.resolve(rel)
	if err != nil {
		return Range{}, err
	}
	fi, err := os.Stat(real)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Range{}, fmt.Errorf("%w: %s", ErrNotFound, rel)
		}
		return Range{}, err
	}
	if fi.Size() > s.opts.MaxFileBytes {
		return Range{}, fmt.Errorf("%w: %s is %d bytes, max %d", ErrTooLarge, rel, fi.Size(), s.opts.MaxFileBytes)
	}
	data, err := os.ReadFile(real)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Range{}, fmt.Errorf("%w: %s", ErrNotFound, rel)
		}
		return Range{}, err
	}
	lines := splitLines(string(data))
	r := Range{Path: rel, TotalLines: len(lines)}
	if len(lines) == 0 && lineStart <= 1 {
		return r, nil
	}
	if lineStart <= 0 {
		lineStart = 1
	}
	if lineEnd <= 0 || lineEnd > len(lines) {
		lineEnd = len(lines)
	}
	if lineStart > len(lines) || lineEnd < lineStart {
		return Range{}, fmt.Errorf("%w: %d-%d of %s (%d lines)", ErrInvalidRange, lineStart, lineEnd, rel, len(lines))
	}
	size := 0
	end := lineStart
	for ; end <= lineEnd; end++ {
		size += len(lines[end-1]) + 1
		if size > MaxGetBytes && end > lineStart {
			r.Truncated = true
			break
		}
	}
	r.LineStart, r.LineEnd = lineStart, end-1
	r.Text = strings.Join(lines[lineStart-1:end-1], "\n")
	return r, nil
}

// PromptContext returns MEMORY.md and today's and yesterday's daily notes,
// each under a heading naming its file, for a chat agent's system prompt.
// The whole is at most maxBytes (default 16 KiB when <= 0): sections share
// the budget, small ones first; a long-term section that must be cut keeps
// its beginning, a daily one its end (the latest entries). Missing files are
// left out; unreadable ones are logged and left out. The result is "" when
// there is nothing to show.
func (s *Store) PromptContext(maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = 16 << 10
	}
	if s.closed() {
		return ""
	}
	now := s.opts.Now()
	// The files rarely change between two turns: when the folder and the
	// three files are the same ones (inode), of the same type, size and
	// mtime as at the last call, its result stands, for four lstat calls
	// instead of resolving and reading every file again.
	days := [2]string{now.AddDate(0, 0, -1).Format("2006-01-02"), now.Format("2006-01-02")}
	at := s.promptIdentity(maxBytes, days)
	s.promptMu.Lock()
	defer s.promptMu.Unlock()
	if at != "" && at == s.promptAt {
		return s.prompt
	}
	s.promptAt, s.prompt = at, s.buildPromptContext(maxBytes, days)
	return s.prompt
}

// promptIdentity describes what PromptContext would read; "" when it
// cannot tell.
func (s *Store) promptIdentity(maxBytes int, days [2]string) string {
	b := strconv.AppendInt(nil, int64(maxBytes), 10)
	for _, name := range []string{"", longTermName, days[0] + ".md", days[1] + ".md"} {
		fi, err := os.Lstat(filepath.Join(s.memDir, name))
		if errors.Is(err, fs.ErrNotExist) {
			b = append(b, "|-"...)
			continue
		}
		if err != nil {
			return ""
		}
		b = append(b, '|')
		b = strconv.AppendUint(b, uint64(fi.Mode()), 16)
		b = append(b, ' ')
		b = strconv.AppendUint(b, inode(fi), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, fi.Size(), 10)
		b = append(b, ' ')
		b = strconv.AppendInt(b, fi.ModTime().UnixNano(), 10)
	}
	return string(b)
}

func (s *Store) buildPromptContext(maxBytes int, days [2]string) string {
	type section struct {
		header, body string
		keepTail     bool
	}
	var secs []*section
	add := func(rel, title string, keepTail bool) {
		real, err := s.resolve(rel)
		if err != nil {
			if !errors.Is(err, ErrNotFound) {
				s.log.Warn("memory prompt context", "path", rel, "err", err)
			}
			return
		}
		data, err := os.ReadFile(real)
		if err != nil {
			s.log.Warn("memory prompt context", "path", rel, "err", err)
			return
		}
		body := strings.TrimSpace(strings.ReplaceAll(string(data), "\r\n", "\n"))
		if body == "" {
			return
		}
		secs = append(secs, &section{header: "## " + title + " (" + rel + ")\n\n", body: body, keepTail: keepTail})
	}
	add(memDirName+"/"+longTermName, "Long-term memory", false)
	for _, day := range days {
		add(memDirName+"/"+day+".md", "Daily notes "+day, true)
	}
	if len(secs) == 0 {
		return ""
	}

	const sep = "\n\n"
	budget := maxBytes - len(sep)*(len(secs)-1)
	bySize := append([]*section(nil), secs...)
	sort.SliceStable(bySize, func(i, j int) bool {
		return len(bySize[i].header)+len(bySize[i].body) < len(bySize[j].header)+len(bySize[j].body)
	})
	for i, sec := range bySize {
		share := budget / (len(bySize) - i)
		room := share - len(sec.header)
		if room < len(sec.body) && room < 64 { // a cut this short is not worth its header
			sec.header, sec.body = "", ""
			continue
		}
		sec.body = fitText(sec.body, room, sec.keepTail)
		budget -= len(sec.header) + len(sec.body)
	}
	var parts []string
	for _, sec := range secs {
		if sec.body != "" {
			parts = append(parts, sec.header+sec.body)
		}
	}
	return strings.Join(parts, sep)
}

const cutMark = "[…]"

// fitText cuts s to at most n bytes at a line boundary (or a rune boundary
// if one line is longer), keeping its end if keepTail, and marks the cut.
func fitText(s string, n int, keepTail bool) string {
	if len(s) <= n {
		return s
	}
	n -= len(cutMark) + 1
	if n <= 0 {
		return ""
	}
	if keepTail {
		t := s[len(s)-n:]
		if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)-1 {
			t = t[i+1:]
		} else {
			for len(t) > 0 && !utf8RuneStart(t[0]) {
				t = t[1:]
			}
		}
		return cutMark + "\n" + t
	}
	h := s[:n]
	if i := strings.LastIndexByte(h, '\n'); i > 0 {
		h = h[:i]
	} else {
		h = truncateRunes(s, n)
	}
	return h + "\n" + cutMark
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
