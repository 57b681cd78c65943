// Package conformance drives the real service with clients nobody here
// wrote, from npm (testdata/package.json, installed with npm ci by
// scripts/setup.sh or, when missing, by the first test that needs them):
// the Standard Webhooks reference library signs and verifies against
// Jarvis in both directions, and the WHATWG EventSource implementation
// follows a session stream across a dropped connection.
//
// Run: go test -race -tags sqlite_fts5 ./tests/conformance/
package conformance

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"jarvis/api"
	"jarvis/internal/testpeer"
	"jarvis/service"
	"jarvis/service/config"
)

const token = "conformance-token-0123456789"

var (
	npmOnce sync.Once
	npmErr  error
)

// nodePeers makes sure testdata's npm packages are installed (npm ci, when
// node_modules is missing or older than the lock file) and returns the
// directory of the node scripts.
func nodePeers(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is required for the conformance tests (scripts/setup.sh checks for it)")
	}
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	npmOnce.Do(func() {
		lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
		if err != nil {
			npmErr = err
			return
		}
		if inst, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil && !inst.ModTime().Before(lock.ModTime()) {
			return
		}
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			npmErr = fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
		}
	})
	if npmErr != nil {
		t.Fatal(npmErr)
	}
	return dir
}

type secrets map[string]string

func (s secrets) Get(ref string) (string, error) {
	if v, ok := s[ref]; ok {
		return v, nil
	}
	return "", fmt.Errorf("no secret %q", ref)
}

// startService runs the real service in httptest with a scripted model
// upstream, agents (JSON objects after "general") and secrets.
func startService(t *testing.T, agents string, sec secrets) (*httptest.Server, *api.Client) {
	t.Helper()
	up := httptest.NewServer(testpeer.NewOpenAI())
	t.Cleanup(up.Close)
	if agents != "" {
		agents = "," + agents
	}
	cfg, err := config.Parse("test.json", []byte(fmt.Sprintf(`{"defaultProvider":"openai-compatible","providers":{"openai-compatible":{"baseUrl":%q,"model":"m"}},
		"agents":[{"agentId":"general","displayName":"General"}%s]}`, up.URL+"/v1", agents)))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(context.Background(), service.Options{DataDir: t.TempDir(), Config: cfg, Token: token, Secrets: sec})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); svc.Close() })
	return srv, api.NewClient(srv.URL, token, nil)
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
