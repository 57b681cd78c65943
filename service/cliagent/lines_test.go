package cliagent

import (
	"slices"
	"strings"
	"testing"
)

func TestLineWriter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		max       int
		chunks    []string
		wantLines []string
		wantSkips []int
	}{
		{"one write", 100, []string{"a\nb\n"}, []string{"a", "b"}, nil},
		{"split across writes", 100, []string{"ab", "c\nd", "e\n"}, []string{"abc", "de"}, nil},
		{"crlf and blanks", 100, []string{"a\r\n\r\n  \nb\r\n"}, []string{"a", "b"}, nil},
		{"final line without newline", 100, []string{"a\nlast"}, []string{"a", "last"}, nil},
		{"oversized in one write", 4, []string{"12345\nok\n"}, []string{"ok"}, []int{5}},
		{"oversized across writes", 4, []string{"12", "34", "56", "78\nok\n"}, []string{"ok"}, []int{8}},
		{"exactly max", 4, []string{"1234\n"}, []string{"1234"}, nil},
		{"oversized final line", 4, []string{"ok\n123456"}, []string{"ok"}, []int{6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines []string
			var skips []int
			w := &lineWriter{max: tt.max, onLine: func(b []byte) { lines = append(lines, string(b)) }, onSkip: func(n int) { skips = append(skips, n) }}
			for _, c := range tt.chunks {
				if n, err := w.Write([]byte(c)); n != len(c) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			w.flush()
			if !slices.Equal(lines, tt.wantLines) || !slices.Equal(skips, tt.wantSkips) {
				t.Errorf("lines %q skips %v, want %q %v", lines, skips, tt.wantLines, tt.wantSkips)
			}
		})
	}
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	b := &tailBuffer{max: 8}
	b.Write([]byte("hello "))
	b.Write([]byte("world"))
	if got := b.String(); got != "lo world" {
		t.Errorf("tail = %q", got)
	}
	b.Write([]byte(strings.Repeat("z", 20)))
	if got := b.String(); got != strings.Repeat("z", 8) {
		t.Errorf("tail = %q", got)
	}
}
