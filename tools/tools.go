// Package tools owns the OS tools the desktop executes on the user's behalf:
// their names, descriptions, JSON schemas and default risk (Definitions), and
// their executors. The service offers these same definitions to the model but
// never executes them: a call travels to the desktop as a tool.request event,
// passes the desktop's safety gate (app/gate), runs here, and its result is
// posted back.
//
// An Executor (NewExecutor) runs the tools:
//
//	x, err := tools.NewExecutor(tools.Options{Workspace: dir, ConfineHelper: helper})
//	out, err := x.Execute(ctx, "read_file", json.RawMessage(`{"path":"notes.md"}`))
//
// File tools (list_dir, read_file, write_file, edit_file, make_dir,
// move_path, delete_path, search_files, open_path, and run_command's cwd)
// are confined to the workspace folder: a path with a ".." element, an
// absolute path elsewhere, or a symlink leading outside is refused with
// ErrOutsideWorkspace, and the file operations go through an os.Root so a
// symlink swapped in after the check cannot escape either. open_url takes
// http(s) URLs only. run_command starts any program the gate allows,
// directly (shell syntax only as an explicit sh -c '…'), inside the sandbox
// (confine.go), with a timeout that stops its whole process tree and a cap
// on captured output. Launchers, notifications and the clipboard use the
// platform's helper programs: xdg-open or gio, gtk-launch, notify-send and
// wl-clipboard, xclip or xsel on Linux; open, osascript, pbcopy and pbpaste
// on macOS; rundll32, powershell and clip on Windows (no notifications
// there yet: ErrUnsupported). Tests swap LookPath and GOOS to run scripted
// fakes and check the exact argv.
//
// Executor.Assess runs the same validation as Execute without running
// anything; the gate uses it for argument-aware classification, so the gate
// and the executor cannot disagree about what a call would touch. Arguments
// are decoded strictly (exact names, none unknown or repeated) and Assess
// returns the call's canonical form (canonical.go), which is what the gate
// judges and Execute is handed.
//
// ServiceDefinitions are the service-run tools that send data out of the
// process (agents_message, round_table): the gate judges them like OS tools,
// and the Executor "runs" them by approving; the service runs them.
//
// Definitions is pure data. An Executor is safe for concurrent use.
package tools

import "encoding/json"

// Risk is a tool call's safety class. The desktop's gate is the final
// authority; a risk proposed by the service or the model can only raise it.
type Risk string

const (
	Safe      Risk = "safe"
	Risky     Risk = "risky"
	Forbidden Risk = "forbidden"
)

// Rank orders risks so that the higher of two can be taken; unknown values
// rank as forbidden (fail closed).
func (r Risk) Rank() int {
	switch r {
	case Safe:
		return 0
	case Risky:
		return 1
	default:
		return 2
	}
}

// Max returns the higher of two risks.
func Max(a, b Risk) Risk {
	if b.Rank() > a.Rank() {
		return b
	}
	return a
}

// Definition describes one tool as offered to a model.
type Definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON schema of the arguments object
	Risk        Risk            `json:"risk"`       // default risk before argument-aware rules
	// Capabilities are the capability names of docs/protocols/agents.md's tool scoping
	// (e.g. "fs.read"); empty means the tool is not capability-scoped.
	Capabilities []string `json:"capabilities,omitempty"`
	// Outbound, when set, says where a call of this tool sends data (an MCP
	// tool of a remote server, or one that says it reaches the open world):
	// with untrusted content in the conversation the gate asks before it
	// runs (app/gate/taint.go).
	Outbound string `json:"outbound,omitempty"`
	// Title is the tool's name for people, when its Name is not one (an
	// MCP tool: "Everything › Echo"); the permission prompt shows it.
	Title string `json:"title,omitempty"`
}

func schema(s string) json.RawMessage { return json.RawMessage(s) }

// Definitions returns the OS tools, in a stable order.
func Definitions() []Definition {
	return []Definition{
		{Name: "open_app", Description: "Launch an installed desktop application by its id or name.", Risk: Risky,
			Capabilities: []string{"os.launch"},
			Parameters:   schema(`{"type":"object","properties":{"app_id":{"type":"string","description":"Application id or desktop-file name, e.g. \"firefox\""}},"required":["app_id"],"additionalProperties":false}`)},
		{Name: "open_url", Description: "Open an http(s) URL in the default browser.", Risk: Risky,
			Capabilities: []string{"os.launch"},
			Parameters:   schema(`{"type":"object","properties":{"url":{"type":"string","description":"An http:// or https:// URL"}},"required":["url"],"additionalProperties":false}`)},
		{Name: "open_path", Description: "Open a file or folder inside the workspace with its default application.", Risk: Risky,
			Capabilities: []string{"os.launch", "fs.read"},
			Parameters:   schema(`{"type":"object","properties":{"path":{"type":"string","description":"Path relative to the workspace folder"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "list_dir", Description: "List the entries of a folder inside the workspace.", Risk: Safe,
			Capabilities: []string{"fs.read"},
			Parameters:   schema(`{"type":"object","properties":{"path":{"type":"string","description":"Folder relative to the workspace; empty for its root"}},"additionalProperties":false}`)},
		{Name: "read_file", Description: "Read a text file inside the workspace (output capped).", Risk: Safe,
			Capabilities: []string{"fs.read"},
			Parameters:   schema(`{"type":"object","properties":{"path":{"type":"string","description":"File relative to the workspace"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "write_file", Description: "Create or overwrite a text file inside the workspace.", Risk: Risky,
			Capabilities: []string{"fs.write"},
			Parameters:   schema(`{"type":"object","properties":{"path":{"type":"string","description":"File relative to the workspace"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`)},
		{Name: "edit_file", Description: "Replace exact text in a text file inside the workspace: old_string must occur expected_count times (default 1), else nothing changes.", Risk: Risky,
			Capabilities: []string{"fs.write"},
			Parameters:   schema(`{"type":"object","properties":{"path":{"type":"string","description":"File relative to the workspace"},"old_string":{"type":"string","description":"The exact text to replace"},"new_string":{"type":"string","description":"The text to put in its place"},"expected_count":{"type":"integer","minimum":1,"description":"How many times old_string occurs (all are replaced); default 1"}},"required":["path","old_string","new_string"],"additionalProperties":false}`)},
		{Name: "make_dir", Description: "Create a folder (and its parents) inside the workspace.", Risk: Risky,
			Capabilities: []string{"fs.write"},
			Parameters:   schema(`{"type":"object","properties":{"path":{"type":"string","description":"Folder relative to the workspace"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "move_path", Description: "Move or rename a file or folder inside the workspace; an existing destination is replaced only with overwrite (never a folder).", Risk: Risky,
			Capabilities: []string{"fs.write"},
			Parameters:   schema(`{"type":"object","properties":{"from":{"type":"string","description":"File or folder relative to the workspace"},"to":{"type":"string","description":"New path relative to the workspace"},"overwrite":{"type":"boolean","description":"Replace an existing file at to; default false"}},"required":["from","to"],"additionalProperties":false}`)},
		{Name: "delete_path", Description: "Delete a file or folder inside the workspace by moving it to Jarvis's trash (it can be restored).", Risk: Risky,
			Capabilities: []string{"fs.write"},
			Parameters:   schema(`{"type":"object","properties":{"path":{"type":"string","description":"File or folder relative to the workspace"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "search_files", Description: "Find files inside the workspace by name glob and/or lines containing a text (capped; binary files are skipped).", Risk: Safe,
			Capabilities: []string{"fs.read"},
			Parameters:   schema(`{"type":"object","properties":{"path":{"type":"string","description":"Folder to search, relative to the workspace; empty for its root"},"name":{"type":"string","description":"Glob over file names, e.g. \"*.md\""},"content":{"type":"string","description":"Text a line must contain"}},"additionalProperties":false}`)},
		{Name: "clipboard_read", Description: "Read the text on the clipboard.", Risk: Risky,
			Capabilities: []string{"clipboard.read"},
			Parameters:   schema(`{"type":"object","properties":{},"additionalProperties":false}`)},
		// Risky: what a prompt-injected model puts on the clipboard ("curl … |
		// sh") is what the user pastes next; the prompt shows the text.
		{Name: "clipboard_write", Description: "Put text on the clipboard.", Risk: Risky,
			Capabilities: []string{"clipboard.write"},
			Parameters:   schema(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)},
		{Name: "notify", Description: "Show a desktop notification.", Risk: Safe,
			Capabilities: []string{"os.notify"},
			Parameters:   schema(`{"type":"object","properties":{"title":{"type":"string"},"body":{"type":"string"}},"required":["title"],"additionalProperties":false}`)},
		{Name: "run_command", Description: "Run a program with arguments in a sandbox (no shell: use sh -c for shell syntax, which always asks the user), with a timeout and an output cap. It can write only in the workspace and has no network unless network is true.", Risk: Risky,
			Capabilities: []string{"os.exec"},
			Parameters:   schema(`{"type":"object","properties":{"program":{"type":"string","description":"Program name looked up on PATH, or an absolute path"},"args":{"type":"array","items":{"type":"string"}},"cwd":{"type":"string","description":"Working folder relative to the workspace"},"network":{"type":"boolean","description":"The program needs the network (the user is asked)"}},"required":["program"],"additionalProperties":false}`)},
	}
}

// Lookup returns the definition named name: an OS tool, or a service-run
// tool the gate judges (ServiceDefinitions).
func Lookup(name string) (Definition, bool) {
	for _, d := range append(Definitions(), ServiceDefinitions()...) {
		if d.Name == name {
			return d, true
		}
	}
	return Definition{}, false
}
