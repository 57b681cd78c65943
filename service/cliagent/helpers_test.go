package cliagent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// binDir holds the scripted claude, codex and pi executables. They are
// written once, before any test runs: writing an executable while parallel
// tests fork risks ETXTBSY when it is then exec'd. Each stub runs the
// per-test script $FAKE_DIR/script.sh, a plain data file.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	if runtime.GOOS == "windows" || os.Getenv("CONFINE_HELPER") == "1" || os.Getenv("ESCAPE_HELPER") == "1" {
		// The scripted-CLI tests skip themselves on Windows; a helper
		// process of the sandbox tests needs no stubs.
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "cliagent-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// The stub records its argv (NUL-separated, one file per invocation)
	// and working directory, then becomes the test's script.
	stub := `#!/bin/sh
n=$(cat "$FAKE_DIR/count" 2>/dev/null || echo 0)
n=$((n+1))
echo "$n" > "$FAKE_DIR/count"
for a in "$@"; do printf '%s\0' "$a"; done > "$FAKE_DIR/argv.$n"
pwd > "$FAKE_DIR/pwd"
exec /bin/sh "$FAKE_DIR/script.sh" "$@"
`
	for _, name := range []string{"claude", "codex", "pi"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(stub), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	binDir = dir
	return m.Run()
}

// fakeCLI is one test's scripted CLI.
type fakeCLI struct {
	t   *testing.T
	dir string
}

// newFake writes a script from a transcript: each line is printed to stdout
// as is, except directives:
//
//	@sleep 0.2      sleep that many seconds
//	@stderr TEXT    print TEXT to stderr
//	@exit N         exit with code N
//	@sh COMMAND     run a shell command
func newFake(t *testing.T, transcript string) *fakeCLI {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("scripted CLIs are POSIX shell scripts")
	}
	f := &fakeCLI{t: t, dir: t.TempDir()}
	var script strings.Builder
	var out []string
	nfile := 0
	writeFile := func(content string) string {
		nfile++
		name := filepath.Join(f.dir, fmt.Sprintf("chunk.%d", nfile))
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return shellQuote(name)
	}
	flush := func() {
		if len(out) > 0 {
			fmt.Fprintf(&script, "cat %s\n", writeFile(strings.Join(out, "\n")+"\n"))
			out = nil
		}
	}
	for _, line := range strings.Split(strings.Trim(transcript, "\n"), "\n") {
		directive, arg, _ := strings.Cut(line, " ")
		switch directive {
		case "@sleep":
			flush()
			fmt.Fprintf(&script, "sleep %s\n", arg)
		case "@stderr":
			flush()
			fmt.Fprintf(&script, "cat %s >&2\n", writeFile(arg+"\n"))
		case "@exit":
			flush()
			fmt.Fprintf(&script, "exit %s\n", arg)
		case "@sh":
			flush()
			script.WriteString(arg + "\n")
		default:
			out = append(out, line)
		}
	}
	flush()
	if err := os.WriteFile(filepath.Join(f.dir, "script.sh"), []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// writeRaw adds a data file to the fake's directory (for huge lines).
func (f *fakeCLI) writeRaw(name, content string) string {
	f.t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return shellQuote(p)
}

// env puts the stubs first on PATH and selects this fake's script.
func (f *fakeCLI) env() []string {
	return []string{"PATH=" + binDir + string(os.PathListSeparator) + os.Getenv("PATH"), "FAKE_DIR=" + f.dir}
}

func (f *fakeCLI) runner(kind Kind, mod func(*Options)) *Runner {
	f.t.Helper()
	opts := Options{Kind: kind, Env: f.env(), GracePeriod: time.Second, Logger: testLogger(f.t)}
	if mod != nil {
		mod(&opts)
	}
	r, err := New(opts)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// argv returns the arguments (without argv[0]) of the n-th invocation.
func (f *fakeCLI) argv(n int) []string {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, fmt.Sprintf("argv.%d", n)))
	if err != nil {
		f.t.Fatalf("invocation %d: %v", n, err)
	}
	args := strings.Split(string(b), "\x00")
	return args[:len(args)-1]
}

func (f *fakeCLI) invocations() int {
	b, err := os.ReadFile(filepath.Join(f.dir, "count"))
	if err != nil {
		return 0
	}
	var n int
	fmt.Sscan(string(b), &n)
	return n
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// recorder collects events; Run calls it from one goroutine at a time.
type recorder struct {
	events []Event
}

func (r *recorder) on(ev Event) { r.events = append(r.events, ev) }

func (r *recorder) text() []string {
	var out []string
	for _, ev := range r.events {
		if ev.TextDelta != "" {
			out = append(out, ev.TextDelta)
		}
	}
	return out
}

func (r *recorder) thinking() string {
	var b strings.Builder
	for _, ev := range r.events {
		b.WriteString(ev.ThinkingDelta)
	}
	return b.String()
}

// kinds of event in order: "text", "thinking", "start:NAME", "end:NAME".
func (r *recorder) sequence() []string {
	var out []string
	for _, ev := range r.events {
		switch {
		case ev.TextDelta != "":
			out = append(out, "text")
		case ev.ThinkingDelta != "":
			out = append(out, "thinking")
		case ev.ToolStarted != nil:
			out = append(out, "start:"+ev.ToolStarted.Name)
		case ev.ToolFinished != nil:
			out = append(out, "end:"+ev.ToolFinished.Name)
		}
	}
	return out
}

// syncBuffer is a log sink written from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testWriter sends logs to t.Log so they show only for failing tests.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func run(t *testing.T, r *Runner, req Request) (Result, *recorder, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	rec := &recorder{}
	res, err := r.Run(ctx, req, rec.on)
	return res, rec, err
}

func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
