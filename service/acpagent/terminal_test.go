package acpagent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A terminal is one command run through the Host (the desktop's gate):
// create runs it to its end, and output, wait_for_exit, kill and release
// answer from what it kept; the output limit keeps the end, at a character
// boundary, and says it cut; a denial fails the creation; a cwd outside
// the working folder never reaches the Host.
func TestTerminalsThroughTheHost(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	sub := filepath.Join(f.dir, "sub")
	os.Mkdir(sub, 0o700)
	h := &fileHost{}
	for _, tt := range []struct{ cmd, want string }{
		{"term cwd=" + sub + " pwd", `exit=0 truncated=false released=true output="` + sub + `\n"`},
		{"term false", `exit=1 truncated=false released=true output=""`},
		{"termline printf %s héllo-world", ``}, // shell syntax (%): left whole, so no such program
		{"termline echo one two", `exit=0 truncated=false released=true output="one two\n"`},
		{"term limit=7 echo héllo-world", `exit=0 truncated=true released=true output="-world\n"`},
	} {
		res, _, err := f.prompt(tt.cmd, h)
		if err != nil {
			t.Fatalf("%s: %v", tt.cmd, err)
		}
		if tt.want == "" {
			if !strings.HasPrefix(res.Text, "terminal failed:") {
				t.Errorf("%s: %q, want a failed creation", tt.cmd, res.Text)
			}
			continue
		}
		if res.Text != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.cmd, res.Text, tt.want)
		}
	}
	outside := t.TempDir()
	if res, _, err := f.prompt("term cwd="+outside+" pwd", h); err != nil || !strings.Contains(res.Text, "outside the agent's working folder") {
		t.Errorf("cwd outside: %q %v", res.Text, err)
	}
	denied := &fileHost{runErr: errors.New("denied by the user")}
	if res, _, err := f.prompt("term pwd", denied); err != nil || !strings.Contains(res.Text, "terminal failed") || !strings.Contains(res.Text, "denied by the user") {
		t.Errorf("denied: %q %v", res.Text, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.calls {
		if strings.Contains(c, outside) {
			t.Errorf("a cwd outside the working folder reached the host: %q", c)
		}
	}
	if want := `run echo ["one" "two"] in ` + f.dir; !contains(h.calls, want) {
		t.Errorf("calls %q lack %q (a plain command line is split into words; the default cwd is the working folder)", h.calls, want)
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}
