package app

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperOllamaServe is not a test: it is the `ollama serve` that
// TestStartOllama runs (a real process started through PATH). It answers
// GET /api/version on OLLAMA_HOST, as Ollama does, and writes its pid.
func TestHelperOllamaServe(t *testing.T) {
	if os.Getenv("JARVIS_TEST_OLLAMA") == "" {
		t.Skip("run by TestStartOllama only")
	}
	os.WriteFile(os.Getenv("JARVIS_TEST_OLLAMA"), []byte(strconv.Itoa(os.Getpid())), 0o600)
	fmt.Println("Listening on", os.Getenv("OLLAMA_HOST"))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"version":"0.0.0-test"}`) })
	http.ListenAndServe(os.Getenv("OLLAMA_HOST"), mux)
	os.Exit(0)
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// fakeOllama puts an `ollama` on PATH that runs TestHelperOllamaServe
// (or, with script, that script), and returns the file its pid goes to.
func fakeOllama(t *testing.T, script string) string {
	t.Helper()
	bin := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "pid")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if script == "" {
		script = fmt.Sprintf("#!/bin/sh\n[ \"$1\" = serve ] || exit 2\nJARVIS_TEST_OLLAMA=%q exec %q -test.run='^TestHelperOllamaServe$'\n", pidFile, exe)
	}
	if err := os.WriteFile(filepath.Join(bin, "ollama"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return pidFile
}

// TestStartOllama: "Start Ollama" runs `ollama serve`, waits until it
// answers, and leaves a running one alone.
func TestStartOllama(t *testing.T) {
	addr := freeAddr(t)
	t.Setenv("OLLAMA_HOST", addr)
	pidFile := fakeOllama(t, "")
	logDir := t.TempDir()
	out, err := startOllama(context.Background(), logDir, 60*time.Second)
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, _ := strconv.Atoi(string(b)); pid > 0 {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	})
	if err != nil || !out.Installed || !out.Started || !out.Running || out.Message != "Ollama started and is answering." {
		t.Fatalf("start: %+v %v", out, err)
	}
	if !ollamaAnswers(context.Background(), addr) {
		t.Fatal("Ollama does not answer after the start")
	}
	if b, _ := os.ReadFile(filepath.Join(logDir, "ollama.log")); !strings.Contains(string(b), "Listening on "+addr) {
		t.Fatalf("ollama.log: %q", b)
	}
	// Running already: nothing is started again.
	again, err := startOllama(context.Background(), logDir, time.Second)
	if err != nil || again.Started || !again.Running || again.Message != "Ollama is running." {
		t.Fatalf("second start: %+v %v", again, err)
	}
}

// TestStartOllamaNotInstalled: without the program, it says how to install it.
func TestStartOllamaNotInstalled(t *testing.T) {
	t.Setenv("OLLAMA_HOST", freeAddr(t))
	t.Setenv("PATH", t.TempDir())
	out, err := startOllama(context.Background(), t.TempDir(), time.Second)
	if err != nil || out.Installed || out.Running || !strings.Contains(out.Message, "Ollama is not installed") || !strings.Contains(out.Message, "ollama.com/download") {
		t.Fatalf("%+v %v", out, err)
	}
}

// TestStartOllamaThatFails: an Ollama that exits at once is reported with
// the last line it wrote.
func TestStartOllamaThatFails(t *testing.T) {
	t.Setenv("OLLAMA_HOST", freeAddr(t))
	fakeOllama(t, "#!/bin/sh\necho 'Error: could not create directory /nope: permission denied' >&2\nexit 1\n")
	_, err := startOllama(context.Background(), t.TempDir(), 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "Ollama stopped as it started") || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("err %v", err)
	}
}

func TestOllamaAddr(t *testing.T) {
	for in, want := range map[string]string{"": "127.0.0.1:11434", "0.0.0.0:9000": "127.0.0.1:9000", "http://10.0.0.2:11434/": "10.0.0.2:11434", "myhost": "myhost:11434"} {
		t.Setenv("OLLAMA_HOST", in)
		if got := ollamaAddr(); got != want {
			t.Errorf("OLLAMA_HOST=%q: %q, want %q", in, got, want)
		}
	}
}
