package memory

import "strings"

// chunk is one searchable piece of a file: a run of whole lines.
// Text is exactly lines[LineStart-1 : LineEnd] of splitLines joined by "\n",
// so any sub-range of it can be mapped back to file lines by counting "\n".
type chunk struct {
	LineStart, LineEnd int // 1-based, inclusive
	Text               string
}

// Chunk size caps. A chunk longer than this is split at line boundaries; a
// single line longer than maxChunkBytes stays one chunk, because splitting a
// line would make line ranges lie.
const (
	maxChunkLines = 40
	maxChunkBytes = 2000
)

// splitLines splits a file into lines the way every line number in this
// package counts them: "\n" ends a line, one "\r" before it is part of the
// break ("\r\n" is one break), and a final break does not start an empty
// extra line. A lone "\r" is content, as it is for Go's bufio.ScanLines.
func splitLines(data string) []string {
	if data == "" {
		return nil
	}
	lines := strings.Split(data, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

func isBlank(l string) bool { return strings.TrimSpace(l) == "" }

// indent3 strips up to three leading spaces (CommonMark block indentation);
// it reports false if the line is indented further (an indented code line).
func indent3(l string) (string, bool) {
	for i := 0; i < 4; i++ {
		if i == len(l) || l[i] != ' ' {
			return l[i:], true
		}
	}
	return l, false
}

func isHeading(l string) bool {
	s, ok := indent3(l)
	if !ok {
		return false
	}
	n := 0
	for n < len(s) && s[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(s) || s[n] == ' ' || s[n] == '\t')
}

// fenceOpen reports whether l opens a code fence, returning its character
// and length.
func fenceOpen(l string) (byte, int, bool) {
	s, ok := indent3(l)
	if !ok || len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return 0, 0, false
	}
	c := s[0]
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.IndexByte(s[n:], '`') >= 0) {
		return 0, 0, false
	}
	return c, n, true
}

func fenceClose(l string, c byte, n int) bool {
	s, ok := indent3(l)
	if !ok {
		return false
	}
	m := 0
	for m < len(s) && s[m] == c {
		m++
	}
	return m >= n && isBlank(s[m:])
}

type block struct {
	start, end int // 0-based, inclusive
	heading    bool
}

// chunkLines splits a Markdown file's lines into chunks by structure:
// a heading starts a chunk and is kept with the block that follows it;
// paragraphs and lists end at a blank line; a fenced code block is one block
// even across blank lines (an unclosed fence runs to the end of the file).
// Oversized blocks are split at line boundaries. Blank lines between blocks
// belong to no chunk.
func chunkLines(lines []string) []chunk {
	var blocks []block
	for i := 0; i < len(lines); {
		l := lines[i]
		switch {
		case isBlank(l):
			i++
			continue
		case isHeading(l):
			blocks = append(blocks, block{i, i, true})
			i++
			continue
		}
		if c, n, ok := fenceOpen(l); ok {
			j := i + 1
			for j < len(lines) && !fenceClose(lines[j], c, n) {
				j++
			}
			if j == len(lines) {
				j--
			}
			blocks = append(blocks, block{start: i, end: j})
			i = j + 1
			continue
		}
		j := i + 1
		for j < len(lines) && !isBlank(lines[j]) && !isHeading(lines[j]) {
			if _, _, ok := fenceOpen(lines[j]); ok {
				break
			}
			j++
		}
		blocks = append(blocks, block{start: i, end: j - 1})
		i = j
	}

	// Keep a heading with the block under it, so that a hit in a section's
	// first paragraph shows its heading and a heading word finds its text.
	merged := blocks[:0]
	for i := 0; i < len(blocks); i++ {
		b := blocks[i]
		if b.heading && i+1 < len(blocks) && !blocks[i+1].heading {
			b.end = blocks[i+1].end
			i++
		}
		merged = append(merged, b)
	}

	var out []chunk
	for _, b := range merged {
		start, size := b.start, 0
		for k := b.start; k <= b.end; k++ {
			lineBytes := len(lines[k]) + 1
			if k > start && (k-start >= maxChunkLines || size+lineBytes > maxChunkBytes) {
				out = append(out, makeChunk(lines, start, k-1))
				start, size = k, 0
			}
			size += lineBytes
		}
		out = append(out, makeChunk(lines, start, b.end))
	}
	return out
}

func makeChunk(lines []string, start, end int) chunk {
	return chunk{LineStart: start + 1, LineEnd: end + 1, Text: strings.Join(lines[start:end+1], "\n")}
}
