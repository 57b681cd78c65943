// Package proc builds and starts the module's commands (jarvis-service and
// the example agents) as real subprocesses, for tests and benchmarks. Each of
// those commands prints "<name> listening on <URL>" as its first stdout line.
//
// A Proc is safe for concurrent use: Stderr may be read while it runs.
package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"jarvis/internal/childenv"
)

// Build compiles the package pkg ("jarvis/cmd/jarvis-service") with the
// given build tags into dir and returns the binary's path.
func Build(dir, pkg string, tags ...string) (string, error) {
	bin := filepath.Join(dir, filepath.Base(pkg))
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	out, err := exec.Command("go", append(args, pkg)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin, nil
}

// BuildService builds jarvis-service (with SQLite FTS5) into dir.
func BuildService(dir string) (string, error) {
	return Build(dir, "jarvis/cmd/jarvis-service", "sqlite_fts5")
}

// Proc is a running command.
type Proc struct {
	Cmd  *exec.Cmd
	Line string // the listening line, as printed
	URL  string // from the listening line

	mu     sync.Mutex
	stderr bytes.Buffer
}

// Stderr returns what the process wrote on stderr so far.
func (p *Proc) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *Proc) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.Write(b)
}

var listening = regexp.MustCompile(`^\S+ listening on (https?://\S+)$`)

// Start runs bin with args and env added to this process's environment
// (without Jarvis's secrets: childenv),
// and waits (up to a minute) for its listening line. The rest of stdout is
// discarded; stderr is kept (Stderr) and, when echo is set, copied to ours.
func Start(bin string, args, env []string, echo bool) (*Proc, error) {
	p := &Proc{Cmd: exec.Command(bin, args...)}
	p.Cmd.Env = append(childenv.Scrub(os.Environ(), childenv.JarvisSecrets), env...)
	var errOut io.Writer = p
	if echo {
		errOut = io.MultiWriter(p, os.Stderr)
	}
	p.Cmd.Stderr = errOut
	stdout, err := p.Cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.Cmd.Start(); err != nil {
		return nil, err
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case l, ok := <-line:
		if m := listening.FindStringSubmatch(l); ok && m != nil {
			p.Line, p.URL = l, m[1]
			return p, nil
		}
		p.Kill()
		return nil, fmt.Errorf("%s: first stdout line %q is not a listening line; stderr: %s", filepath.Base(bin), l, p.Stderr())
	case <-time.After(time.Minute):
		p.Kill()
		return nil, fmt.Errorf("%s did not start within a minute; stderr: %s", filepath.Base(bin), p.Stderr())
	}
}

// Kill ends the process at once (SIGKILL) and reaps it.
func (p *Proc) Kill() {
	p.Cmd.Process.Kill()
	p.Cmd.Wait()
}

// Stop asks the process to end (SIGINT), waits, and returns its exit error.
func (p *Proc) Stop() error {
	p.Cmd.Process.Signal(os.Interrupt)
	return p.Cmd.Wait()
}
