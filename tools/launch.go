package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"jarvis/internal/childenv"
)

func osGetenv(key string) string { return os.Getenv(key) }

// argv lists are candidates, best first; the first whose program LookPath
// finds is used. No shell is involved anywhere: arguments reach the helper
// program as separate argv elements.

// appID keeps app names to something no launcher reads as an option, a path
// or a script: it starts with a letter or digit and has no quotes or slashes.
var appID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+ -]{0,127}$`)

type openAppArgs struct {
	AppID *string `json:"app_id"`
}

func (e *Executor) prepareOpenApp(args json.RawMessage) (*call, error) {
	var a openAppArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	id, err := required("app_id", a.AppID)
	if err != nil {
		return nil, err
	}
	if !appID.MatchString(id) {
		return nil, fmt.Errorf("%w: app_id %q must be a plain application name", ErrBadArguments, id)
	}
	return &call{canon: map[string]any{"app_id": id}, run: func(ctx context.Context) (string, error) {
		if err := e.launch(ctx, e.openAppArgv(id)); err != nil {
			return "", err
		}
		return "launched " + id, nil
	}}, nil
}

func (e *Executor) openAppArgv(id string) [][]string {
	switch e.opts.GOOS {
	case "darwin":
		return [][]string{{"open", "-a", id}}
	case "windows":
		// appID admits no quote, so the single-quoted literal is exact.
		return [][]string{{"powershell", "-NoProfile", "-NonInteractive", "-Command", "Start-Process -FilePath '" + id + "'"}}
	}
	c := [][]string{{"gtk-launch", id}}
	if f := e.desktopFile(id); f != "" {
		c = append(c, []string{"gio", "launch", f})
	}
	return c
}

// desktopFile finds id's .desktop entry in the XDG data folders, for gio,
// which takes a file rather than an id.
func (e *Executor) desktopFile(id string) string {
	var dirs []string
	if h := e.opts.Getenv("XDG_DATA_HOME"); h != "" {
		dirs = append(dirs, h)
	} else if h := e.opts.Getenv("HOME"); h != "" {
		dirs = append(dirs, filepath.Join(h, ".local", "share"))
	}
	d := e.opts.Getenv("XDG_DATA_DIRS")
	if d == "" {
		d = "/usr/local/share:/usr/share"
	}
	dirs = append(dirs, filepath.SplitList(d)...)
	name := strings.TrimSuffix(id, ".desktop") + ".desktop"
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, "applications", name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

type openURLArgs struct {
	URL *string `json:"url"`
}

// checkURL admits absolute http(s) URLs with a host and nothing a launcher
// could misread (spaces, control characters), and returns the canonical
// form: scheme and host in lower case, as url.URL prints it.
func checkURL(s string) (string, error) {
	if len(s) > 8192 {
		return "", fmt.Errorf("%w: url longer than 8192 bytes", ErrBadArguments)
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return "", fmt.Errorf("%w: url contains spaces or control characters", ErrBadArguments)
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadArguments, err)
	}
	if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
		return "", fmt.Errorf("%w: only http and https URLs may be opened, not %q", ErrNotAllowed, u.Scheme)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%w: url has no host", ErrBadArguments)
	}
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return u.String(), nil
}

func (e *Executor) prepareOpenURL(args json.RawMessage) (*call, error) {
	var a openURLArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	u, err := required("url", a.URL)
	if err != nil {
		return nil, err
	}
	if u, err = checkURL(u); err != nil {
		return nil, err
	}
	return &call{canon: map[string]any{"url": u}, run: func(ctx context.Context) (string, error) {
		if err := e.launch(ctx, e.openArgv(u)); err != nil {
			return "", err
		}
		return "opened " + u, nil
	}}, nil
}

// OpenPath opens an absolute path with the desktop's default handler (the
// launcher of open_url), for an action of the user's in the window such as
// the MCP panel's "Open mcp.json"; no model asks for it.
func (e *Executor) OpenPath(ctx context.Context, path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%w: %q is not an absolute path", ErrBadArguments, path)
	}
	return e.launch(ctx, e.openArgv(path))
}

// openArgv opens a URL or an absolute path with the default handler.
func (e *Executor) openArgv(target string) [][]string {
	switch e.opts.GOOS {
	case "darwin":
		return [][]string{{"open", target}}
	case "windows":
		return [][]string{{"rundll32", "url.dll,FileProtocolHandler", target}}
	}
	return [][]string{{"xdg-open", target}, {"gio", "open", target}}
}

type notifyArgs struct {
	Title *string `json:"title"`
	Body  string  `json:"body"`
}

func (e *Executor) prepareNotify(args json.RawMessage) (*call, error) {
	var a notifyArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	title, err := required("title", a.Title)
	if err != nil {
		return nil, err
	}
	if title == "" {
		return nil, fmt.Errorf("%w: title is empty", ErrBadArguments)
	}
	canon := map[string]any{"title": title}
	if a.Body != "" {
		canon["body"] = a.Body
	}
	return &call{canon: canon, run: func(ctx context.Context) (string, error) {
		// The title says who sent it, before anything the model wrote.
		title := "From " + senderFrom(ctx) + ": " + title
		if _, err := e.helper(ctx, e.notifyArgv(title, a.Body), ""); err != nil {
			return "", err
		}
		return "notified", nil
	}}, nil
}

func (e *Executor) notifyArgv(title, body string) [][]string {
	switch e.opts.GOOS {
	case "darwin":
		// The texts travel as argv to the script, never inside it.
		return [][]string{{"osascript",
			"-e", "on run argv",
			"-e", "display notification (item 2 of argv) with title (item 1 of argv)",
			"-e", "end run",
			title, body}}
	case "windows":
		return nil
	}
	argv := []string{"notify-send", "--app-name=Jarvis", "--", title}
	if body != "" {
		argv = append(argv, body)
	}
	return [][]string{argv}
}

func (e *Executor) prepareClipboardRead(args json.RawMessage) (*call, error) {
	if err := decode(args, &struct{}{}); err != nil {
		return nil, err
	}
	return &call{run: func(ctx context.Context) (string, error) {
		return e.helper(ctx, e.clipboardArgv(false), "")
	}}, nil
}

type clipboardWriteArgs struct {
	Text *string `json:"text"`
}

func (e *Executor) prepareClipboardWrite(args json.RawMessage) (*call, error) {
	var a clipboardWriteArgs
	if err := decode(args, &a); err != nil {
		return nil, err
	}
	text, err := required("text", a.Text)
	if err != nil {
		return nil, err
	}
	if len(text) > e.opts.MaxWriteBytes {
		return nil, fmt.Errorf("%w: text is %d bytes, the limit is %d", ErrBadArguments, len(text), e.opts.MaxWriteBytes)
	}
	return &call{canon: map[string]any{"text": text}, note: clipboardPreview(text), run: func(ctx context.Context) (string, error) {
		if _, err := e.helper(ctx, e.clipboardArgv(true), text); err != nil {
			return "", err
		}
		return fmt.Sprintf("copied %d bytes to the clipboard", len(text)), nil
	}}, nil
}

func (e *Executor) clipboardArgv(write bool) [][]string {
	switch e.opts.GOOS {
	case "darwin":
		if write {
			return [][]string{{"pbcopy"}}
		}
		return [][]string{{"pbpaste"}}
	case "windows":
		if write {
			return [][]string{{"clip"}}
		}
		return [][]string{{"powershell", "-NoProfile", "-NonInteractive", "-Command", "Get-Clipboard -Raw"}}
	}
	var c [][]string
	if e.opts.Getenv("WAYLAND_DISPLAY") != "" {
		if write {
			c = append(c, []string{"wl-copy"})
		} else {
			c = append(c, []string{"wl-paste", "--no-newline"})
		}
	}
	if write {
		return append(c, []string{"xclip", "-selection", "clipboard", "-in"}, []string{"xsel", "--clipboard", "--input"})
	}
	return append(c, []string{"xclip", "-selection", "clipboard", "-out"}, []string{"xsel", "--clipboard", "--output"})
}

// pick returns the first candidate whose program is found, with its path.
func (e *Executor) pick(cands [][]string) (string, []string, error) {
	if len(cands) == 0 {
		return "", nil, fmt.Errorf("%w (%s)", ErrUnsupported, e.opts.GOOS)
	}
	var names []string
	for _, c := range cands {
		if p, err := e.opts.LookPath(c[0]); err == nil {
			return p, c, nil
		}
		names = append(names, c[0])
	}
	return "", nil, fmt.Errorf("%w: none of %s found", ErrUnsupported, strings.Join(names, ", "))
}

// launch starts a launcher and waits up to LaunchWait for it to fail. A
// launcher still running after that (some wait for the app they started)
// counts as launched; it is reaped in the background and never killed, since
// killing it could take the user's new window with it.
func (e *Executor) launch(ctx context.Context, cands [][]string) error {
	path, argv, err := e.pick(cands)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	stderr := &capBuffer{max: 4 << 10}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Env = childenv.Scrub(os.Environ(), childenv.JarvisSecrets)
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTimer(e.opts.LaunchWait)
	defer t.Stop()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
			return fmt.Errorf("%s: %v: %s", argv[0], err, strings.TrimSpace(stderr.String()))
		}
		return nil
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s started, stopped waiting: %w", argv[0], ctx.Err())
	}
}

// helper runs a short-lived helper program (clipboard, notification) with
// the Timeout, feeding it stdin and returning its capped stdout.
func (e *Executor) helper(ctx context.Context, cands [][]string, stdin string) (string, error) {
	path, argv, err := e.pick(cands)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	stdout := &capBuffer{max: e.opts.OutputCap}
	stderr := &capBuffer{max: 4 << 10}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Env = childenv.Scrub(os.Environ(), childenv.JarvisSecrets)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	// xclip and wl-copy leave a child holding the selection, and that child
	// keeps our pipes open: stop reading a moment after the helper exits.
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("%s: %w after %s", argv[0], ErrTimeout, e.opts.Timeout)
	}
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return "", fmt.Errorf("%s: %v: %s", argv[0], err, strings.TrimSpace(stderr.String()))
	}
	out := stdout.String()
	if stdout.truncated() {
		out += fmt.Sprintf("\n[truncated: first %d bytes]", stdout.max)
	}
	return out, nil
}

// previewRunes is how much of a clipboard text the prompt's reason quotes.
const previewRunes = 160

// clipboardPreview is the reason a clipboard_write prompt gives: the text,
// quoted so that line breaks, invisible and direction-changing characters
// show as escapes, cut after previewRunes characters.
func clipboardPreview(text string) string {
	head, cut := text, false
	if utf8.RuneCountInString(text) > previewRunes {
		head, cut = string([]rune(text)[:previewRunes]), true
	}
	s := fmt.Sprintf("puts %d bytes on the clipboard: %s", len(text), strconv.QuoteToASCII(head))
	if cut {
		s += " … (the whole text is in the arguments)"
	}
	return s
}

type senderKey struct{}

// WithSender names, for a notification, the agent that asked for it; the
// window sets it from the session's agent.
func WithSender(ctx context.Context, agent string) context.Context {
	return context.WithValue(ctx, senderKey{}, agent)
}

// senderFrom is WithSender's name on one line, or "an agent".
func senderFrom(ctx context.Context) string {
	name, _ := ctx.Value(senderKey{}).(string)
	name = strings.Join(strings.FieldsFunc(name, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if name == "" {
		return "an agent"
	}
	return name
}
