package proc

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestStartScrubsJarvisSecrets: a started program gets this process's
// environment without JARVIS_TOKEN and JARVIS_SECRET_*, plus what the
// caller passes explicitly (a test hands its service a token that way).
func TestStartScrubsJarvisSecrets(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses /bin/sh")
	}
	t.Setenv("JARVIS_TOKEN", "tok-must-not-leak")
	t.Setenv("JARVIS_SECRET_OPENAI", "sk-must-not-leak")
	t.Setenv("PLAIN_VAR", "inherited")
	p, err := Start("/bin/sh", []string{"-c", `env >&2; echo "x listening on http://127.0.0.1:1"; exec sleep 30`},
		[]string{"EXPLICIT=given"}, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.Stderr(), "EXPLICIT=given") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	env := p.Stderr()
	if strings.Contains(env, "must-not-leak") {
		t.Fatalf("the child's environment holds Jarvis secrets:\n%s", env)
	}
	if !strings.Contains(env, "PLAIN_VAR=inherited") || !strings.Contains(env, "EXPLICIT=given") {
		t.Fatalf("the child's environment misses ordinary or explicit variables:\n%s", env)
	}
}
