package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"jarvis/service/webhook"
)

// Input is what Jarvis POSTs to the inputUrl (docs/protocols/external-agents.md).
type Input struct {
	SessionID   string `json:"sessionId"`
	AgentID     string `json:"agentId"`
	CallbackURL string `json:"callbackUrl"`
	Message     struct {
		Type      string `json:"type"`
		Text      string `json:"text"`
		CreatedAt string `json:"createdAt"`
	} `json:"message"`
}

// Agent is the echo agent: an http.Handler for the inputUrl that replies
// through the callback in the background. Safe for concurrent requests.
type Agent struct {
	Delay   time.Duration // before each reply
	Replies int           // replies per message
	Secret  string        // Standard Webhooks secret (base64, with or without "whsec_"); "" to not sign
	Client  *http.Client  // default: 10 s timeout
	Log     *slog.Logger

	wg sync.WaitGroup
}

// ServeHTTP accepts one input: 202 at once, replies later.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST the external-agent input payload (docs/protocols/external-agents.md) here", http.StatusMethodNotAllowed)
		return
	}
	var in Input
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&in); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	if u, err := url.Parse(in.CallbackURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		http.Error(w, "callbackUrl must be an http(s) URL", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	w.Write([]byte(`{"ok":true}` + "\n"))
	a.log().Info("input", "session", in.SessionID, "agent", in.AgentID, "chars", utf8.RuneCountInString(in.Message.Text),
		"idempotency_key", r.Header.Get("Idempotency-Key"))
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.reply(in)
	}()
}

// Wait waits for replies in flight, or for ctx.
func (a *Agent) Wait(ctx context.Context) {
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (a *Agent) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

func (a *Agent) reply(in Input) {
	n := max(a.Replies, 1)
	for i, text := range Compose(in.Message.Text, n) {
		time.Sleep(a.Delay)
		if err := a.post(in.CallbackURL, text); err != nil {
			a.log().Warn("reply not delivered", "session", in.SessionID, "reply", i+1, "err", err)
			return
		}
	}
}

// post delivers one reply, retrying a few times; every attempt has the same
// webhook-id, so the service applies it once.
func (a *Agent) post(callbackURL, text string) error {
	hc := a.Client
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	var idb [12]byte
	rand.Read(idb[:])
	id := "msg_" + hex.EncodeToString(idb[:])
	var last error
	for attempt := 0; attempt < 3; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 500 * time.Millisecond)
		}
		req, err := http.NewRequest(http.MethodPost, callbackURL, strings.NewReader(text))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "text/markdown; charset=utf-8")
		req.Header.Set("webhook-id", id)
		if a.Secret != "" {
			// The key as every Standard Webhooks library derives it.
			key, err := webhook.Key(a.Secret)
			if err != nil {
				return err
			}
			webhook.SetHeaders(req.Header, key, id, []byte(text), time.Now())
		}
		resp, err := hc.Do(req)
		if err != nil {
			last = err
			continue
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		switch {
		case resp.StatusCode < 300:
			return nil
		case resp.StatusCode >= 500:
			last = fmt.Errorf("callback answered %s", resp.Status)
			continue
		}
		return fmt.Errorf("callback answered %s", resp.Status) // 4xx: retrying will not help
	}
	return last
}

// Compose returns the n Markdown replies to a message: an echo, some facts
// about it, progress lines, and a closing line.
func Compose(text string, n int) []string {
	var quoted bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		quoted.WriteString("> " + line + "\n")
	}
	out := []string{"**Echo** — you said:\n\n" + quoted.String()}
	if n >= 3 {
		r := []rune(text)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		rev := strings.ReplaceAll(string(r), "`", "'")
		out = append(out, fmt.Sprintf("Some facts about it:\n\n- words: %d\n- characters: %d\n- reversed: `%s`\n",
			len(strings.Fields(text)), utf8.RuneCountInString(text), rev))
	}
	for len(out) < n-1 {
		out = append(out, fmt.Sprintf("_Still here_ — reply %d of %d.", len(out)+1, n))
	}
	if n >= 2 {
		out = append(out, fmt.Sprintf("_Done_ — %d replies from **external-echo**.", n))
	}
	return out
}
