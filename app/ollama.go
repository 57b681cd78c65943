package app

// "Start Ollama": when the model server is Ollama and it does not answer,
// the window offers to start it. The click is the user's: App.StartOllama
// runs `ollama serve` (the program found on PATH, nothing downloaded), as a
// process of its own that outlives the window, with its output in the data
// folder's ollama.log, and waits until it answers. When Ollama is not
// installed it says how to install it instead.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// OllamaStart is StartOllama's answer, in words for the window.
type OllamaStart struct {
	Installed bool   `json:"installed"`
	Running   bool   `json:"running"` // it answers now
	Started   bool   `json:"started"` // Jarvis started it (false: it was already running)
	Message   string `json:"message"`
}

// ollamaInstall says how to install Ollama, for a window where it is not.
const ollamaInstall = "Ollama is not installed on this computer. Install it from ollama.com/download " +
	"(on Linux: curl -fsSL https://ollama.com/install.sh | sh), download a model (ollama pull llama3.2), then choose Start Ollama again."

// ollamaWait is how long StartOllama waits for a started Ollama to answer.
const ollamaWait = 30 * time.Second

// StartOllama starts Ollama for the user (their click on "Start Ollama")
// and waits until it answers; one already running is left as it is.
func (a *App) StartOllama() (OllamaStart, error) {
	ctx, cancel := context.WithTimeout(a.ctx, ollamaWait+5*time.Second)
	defer cancel()
	out, err := startOllama(ctx, a.dataDir, ollamaWait)
	if err != nil {
		a.log.Warn("could not start Ollama", "err", err)
		return out, err
	}
	a.log.Info("Ollama", "started", out.Started, "running", out.Running)
	return out, nil
}

// ollamaAddr is where Ollama listens: OLLAMA_HOST as Ollama reads it
// ("host", "host:port" or a URL), else 127.0.0.1:11434.
func ollamaAddr() string {
	h := strings.TrimSpace(os.Getenv("OLLAMA_HOST"))
	h = strings.TrimPrefix(strings.TrimPrefix(h, "http://"), "https://")
	h = strings.TrimSuffix(h, "/")
	switch {
	case h == "":
		return "127.0.0.1:11434"
	case !strings.Contains(h, ":"):
		return h + ":11434"
	case strings.HasPrefix(h, "0.0.0.0:"):
		return "127.0.0.1" + strings.TrimPrefix(h, "0.0.0.0")
	}
	return h
}

// ollamaAnswers reports whether Ollama answers at addr (GET /api/version).
func ollamaAnswers(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/api/version", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// startOllama is StartOllama: logDir holds ollama.log; wait bounds the wait
// for a started Ollama to answer.
func startOllama(ctx context.Context, logDir string, wait time.Duration) (OllamaStart, error) {
	addr := ollamaAddr()
	bin, lookErr := exec.LookPath("ollama")
	out := OllamaStart{Installed: lookErr == nil}
	if ollamaAnswers(ctx, addr) {
		out.Running = true
		out.Message = "Ollama is running."
		return out, nil
	}
	if lookErr != nil {
		out.Message = ollamaInstall
		return out, nil
	}
	// Something else holding the port would make `ollama serve` exit at once.
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		return out, fmt.Errorf("another program is using Ollama's address %s, so Ollama cannot start there; close that program, or set up the model server that is running there", addr)
	}
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return out, fmt.Errorf("could not start Ollama: %w", err)
	}
	logPath := filepath.Join(logDir, "ollama.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return out, fmt.Errorf("could not start Ollama: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Stdout, cmd.Stderr = logf, logf
	detach(cmd) // it keeps running when the window closes, as Ollama started any other way does
	if err := cmd.Start(); err != nil {
		return out, fmt.Errorf("could not start Ollama: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return out, fmt.Errorf("Ollama stopped as it started (%v)%s", err, logTail(logPath))
		case <-deadline.C:
			return out, fmt.Errorf("Ollama was started but did not answer within %s; it may still be starting: try again in a moment%s", wait, logTail(logPath))
		case <-ctx.Done():
			return out, errors.New("stopped waiting for Ollama to answer")
		case <-tick.C:
			if ollamaAnswers(ctx, addr) {
				out.Running, out.Started = true, true
				out.Message = "Ollama started and is answering."
				return out, nil
			}
		}
	}
}

// logTail is the last line Ollama wrote, to say why it did not start.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[i+1:]
	}
	if len(b) == 0 {
		return ""
	}
	if len(b) > 300 {
		b = b[len(b)-300:]
	}
	return ": " + string(b)
}
