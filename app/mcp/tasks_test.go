package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"jarvis/internal/testwait"
)

// everythingOverHTTP starts server-everything's HTTP transport ("sse" or
// "streamableHttp") on a free loopback port and returns its address.
func everythingOverHTTP(t *testing.T, transport string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(peer(t, "mcp-server-everything"), transport)
	cmd.Env = append(cmd.Environ(), fmt.Sprintf("PORT=%d", port))
	var errs syncBuffer
	cmd.Stderr = &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	testwait.Until(t, "server-everything listening over "+transport, 30*time.Second, func() bool {
		// The two transports say it in their own words.
		return strings.Contains(errs.String(), "listening on port") || strings.Contains(errs.String(), "running on port")
	})
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// TestTaskToolRunsAsTask: server-everything's simulate-research-query
// requires a task (execution.taskSupport "required"). Over stdio, legacy
// SSE and Streamable HTTP, a call runs as a task: the task's status
// messages are the call's progress and its result is the call's answer.
// A call given up while the task runs (the user's Stop) cancels the task
// at the server, which answers tasks/cancel with the task cancelled.
func TestTaskToolRunsAsTask(t *testing.T) {
	for _, tc := range []struct{ name, transport string }{{"stdio", ""}, {"sse", "sse"}, {"streamable", "streamableHttp"}} {
		t.Run(tc.name, func(t *testing.T) {
			entry := map[string]any{"command": peer(t, "mcp-server-everything"), "args": []string{"stdio"}}
			switch tc.transport {
			case "sse":
				entry = map[string]any{"type": "sse", "url": everythingOverHTTP(t, "sse") + "/sse"}
			case "streamableHttp":
				entry = map[string]any{"url": everythingOverHTTP(t, "streamableHttp") + "/mcp"}
			}
			cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"every": entry}})
			var logs syncBuffer
			m, _ := startManager(t, string(cfg), func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			const tool = "mcp__every__simulate-research-query"
			waitFor(t, m, "the research tool", func() bool { return hasTool(m, tool) })

			var mu sync.Mutex
			var progress []string
			onProgress := func(p Progress) {
				mu.Lock()
				progress = append(progress, p.Message)
				mu.Unlock()
			}
			out, err := m.Call(context.Background(), "c1", tool, json.RawMessage(`{"topic":"tides"}`), onProgress)
			if err != nil || !strings.Contains(out, "# Research Report: tides") {
				t.Fatalf("call: %v %.200q", err, out)
			}
			mu.Lock()
			got := strings.Join(progress, " | ")
			progress = nil
			mu.Unlock()
			// Over stdio and SSE the server's status notifications give
			// every stage; over Streamable HTTP they travel on a stream
			// go-sdk keeps to itself, and polling (once a second, a
			// stage's length) sees most stages, in order.
			want := "Gathering sources... | Analyzing content... | Synthesizing findings... | Generating report..."
			if tc.transport == "streamableHttp" {
				if got == "" || !inOrder(got, want) {
					t.Fatalf("progress %q: not stages in order", got)
				}
			} else if got != want {
				t.Fatalf("progress %q, want %q", got, want)
			}

			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := m.Call(ctx, "c2", tool, json.RawMessage(`{"topic":"dunes"}`), onProgress)
				errc <- err
			}()
			testwait.Until(t, "the second task's first stage", 20*time.Second, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(progress) > 0
			})
			cancel()
			if err := <-errc; err == nil || !strings.Contains(err.Error(), "cancelled") {
				t.Fatalf("stopped call: %v", err)
			}
			testwait.Until(t, "the server's answer to tasks/cancel", 20*time.Second, func() bool {
				return strings.Contains(logs.String(), "mcp: task cancelled")
			})
			if l := logs.String(); !strings.Contains(l, "status=cancelled") {
				t.Fatalf("log: %s", l)
			}
		})
	}
}

// inOrder says whether the " | "-joined messages of got are some of want's,
// in want's order.
func inOrder(got, want string) bool {
	w := strings.Split(want, " | ")
	i := 0
	for _, g := range strings.Split(got, " | ") {
		for i < len(w) && w[i] != g {
			i++
		}
		if i == len(w) {
			return false
		}
		i++
	}
	return true
}

// TestTaskToolAsksTheUser: an ambiguous research query makes the task ask
// the user (elicitation, delivered on the tasks/result stream while the
// task waits in input_required); the answer reaches the task and its
// report, over stdio and Streamable HTTP.
func TestTaskToolAsksTheUser(t *testing.T) {
	for _, tc := range []struct{ name, transport string }{{"stdio", ""}, {"streamable", "streamableHttp"}} {
		t.Run(tc.name, func(t *testing.T) {
			entry := map[string]any{"command": peer(t, "mcp-server-everything"), "args": []string{"stdio"}}
			if tc.transport != "" {
				entry = map[string]any{"url": everythingOverHTTP(t, tc.transport) + "/mcp"}
			}
			cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"every": entry}})
			var mu sync.Mutex
			var asked []string
			m, _ := startManager(t, string(cfg), func(o *Options) {
				o.Elicit = func(_ context.Context, server string, p *sdk.ElicitParams) (*sdk.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, server+": "+p.Message)
					mu.Unlock()
					return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"interpretation": "historical"}}, nil
				}
			})
			const tool = "mcp__every__simulate-research-query"
			waitFor(t, m, "the research tool", func() bool { return hasTool(m, tool) })
			out, err := m.Call(context.Background(), "c1", tool, json.RawMessage(`{"topic":"tides","ambiguous":true}`), nil)
			if err != nil || !strings.Contains(out, "**Clarification**: historical") {
				t.Fatalf("call: %v %.400q", err, out)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || !strings.Contains(asked[0], `every: The research query "tides" could have multiple interpretations`) {
				t.Fatalf("asked %q", asked)
			}
		})
	}
}
