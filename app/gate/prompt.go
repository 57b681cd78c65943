package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"jarvis/tools"
)

// Choice is the user's answer to a permission prompt.
type Choice string

const (
	Once    Choice = "once"    // allow this call
	Session Choice = "session" // allow this and similar calls for the rest of the session
	Always  Choice = "always"  // allow, and store an allow rule in the policy
	Refuse  Choice = "deny"    // do not run it
)

// Prompt is a permission request shown to the user.
type Prompt struct {
	ID         string `json:"id"` // assigned by the Prompter
	ToolCallID string `json:"tool_call_id"`
	SessionID  string `json:"session_id,omitempty"`
	Tool       string `json:"tool"`
	// Title is the tool's name for people when Tool is not one (an MCP
	// tool: "Everything › Echo", tools.Definition.Title).
	Title       string `json:"title,omitempty"`
	Description string `json:"description"`
	// Note is what the rule that made the call ask says of it, in words
	// ("this file holds credentials", Rule.Note).
	Note string `json:"note,omitempty"`
	// Decisive is what the call acts on (the path, the program with its
	// arguments, the URL, the agent), in full: shown first.
	Decisive []Field `json:"decisive,omitempty"`
	// Arguments are the canonical form that will run, in full; the user
	// may edit them.
	Arguments json.RawMessage `json:"arguments"`
	// Requested is the model's own spelling of the arguments when it
	// differs from the canonical form.
	Requested   json.RawMessage `json:"requested,omitempty"`
	Risk        tools.Risk      `json:"risk"`
	Reason      string          `json:"reason"`                 // the gate's
	ModelReason string          `json:"model_reason,omitempty"` // the service's, untrusted
	Destructive bool            `json:"destructive,omitempty"`
	// Target is where a service-run tool sends its data (Request.Target).
	Target string `json:"target,omitempty"`
	// Choices the user may give; a destructive call offers only once/deny.
	Choices []Choice `json:"choices"`
	// Scopes are the rules "always allow" may save, narrowest first (this
	// file, its folder, ...): the user sees the one chosen before saving.
	Scopes []Scope `json:"scopes,omitempty"`
	// Diff, for a write_file over an existing file, is what would change
	// (diff.go); the window shows it instead of the whole content.
	Diff     *Diff     `json:"diff,omitempty"`
	Deadline time.Time `json:"deadline"`
	// Untrusted names, in words, the untrusted content the conversation
	// has read; Destination, for a call that would send data out, where.
	Untrusted   []string `json:"untrusted,omitempty"`
	Destination string   `json:"destination,omitempty"`
}

// Answer is the user's decision.
type Answer struct {
	Choice Choice `json:"choice"`
	// EditedArguments, when set, replace the call's arguments. The gate
	// classifies them again, and still denies them if they are forbidden.
	EditedArguments json.RawMessage `json:"edited_arguments,omitempty"`
	// Scope picks the rule "always" saves among Prompt.Scopes (0, the
	// narrowest, by default; an index not offered saves the narrowest).
	Scope int `json:"scope,omitempty"`
	// Why, with a denial only, is what the user wrote in "Tell the agent
	// why": the model reads it with the denial (Outcome.UserReason).
	Why string `json:"why,omitempty"`
	// Chat, with "always", is the conversation's title as the window
	// showed it: the saved rule's Origin names it.
	Chat string `json:"chat,omitempty"`
}

// Errors from Prompter. Every one of them means deny.
var (
	ErrPromptTimeout = errors.New("gate: the prompt was not answered in time")
	ErrPromptClosed  = errors.New("gate: the prompt window is closed")
	ErrNoSuchPrompt  = errors.New("gate: no such pending prompt")
	ErrBadAnswer     = errors.New("gate: invalid answer")
	// ErrWithdrawn is the cause a caller cancels a call's context with when
	// the service has given up on the call (its tool-result timeout, a
	// cancel, the turn's end): the prompt is taken off the queue, and an
	// answer that raced it is not honoured.
	ErrWithdrawn = errors.New("gate: the service withdrew the call")
	// ErrExpired: a call of a task's run waited for approval in the Inbox
	// past the task's deadline (denied, audited as expired).
	ErrExpired = errors.New("gate: nobody decided before the task's deadline")
	// ErrKept: a call of a task's run waited for approval in the Inbox and
	// this process stopped; the Inbox keeps it for after the restart
	// (audited as held: neither allowed nor denied yet).
	ErrKept = errors.New("gate: Jarvis stopped while the call waited in the Inbox; the Inbox keeps it")
	// ErrNoOneToAsk is NoOneToAsk's answer: there is no window
	// (`jarvis --headless`), so a call that would prompt is denied.
	ErrNoOneToAsk = errors.New("gate: the call needs the user's permission, and there is nobody to ask (headless)")
)

// NoOneToAsk is the Asker of a gate without a window: prompts are answered
// by the policy alone, and a call that would prompt is denied (audited as
// decided by "headless").
var NoOneToAsk Asker = AskFunc(func(context.Context, Prompt) (Answer, error) {
	return Answer{Choice: Refuse}, ErrNoOneToAsk
})

// PrompterOptions configures a Prompter.
type PrompterOptions struct {
	// Timeout is how long a prompt waits for an answer. Default 2 minutes.
	Timeout time.Duration
	// Now stamps deadlines. Default time.Now.
	Now func() time.Time
}

// Prompter queues permission prompts for the UI and fails closed: a prompt
// that times out, whose caller's context ends, or that is pending when the
// window closes (Close) is answered with an error, which the gate turns into
// a denial.
//
// The UI side: wait on Changed, show Pending (oldest first), and call
// Answer with the prompt's id. All methods are safe for concurrent use.
type Prompter struct {
	timeout time.Duration
	now     func() time.Time

	mu      sync.Mutex
	seq     int64
	queue   []*pending
	changed chan struct{} // closed and replaced on every change
	closed  bool
	done    chan struct{} // closed by Close
}

type pending struct {
	p      Prompt
	answer chan Answer // buffered: Answer never blocks
}

// NewPrompter returns an empty, open queue.
func NewPrompter(opts PrompterOptions) *Prompter {
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Prompter{timeout: opts.Timeout, now: opts.Now, changed: make(chan struct{}), done: make(chan struct{})}
}

// notify wakes Changed waiters; call with mu held.
func (q *Prompter) notify() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// Changed returns a channel closed at the next change of the queue. Take
// it before reading Pending so no change is missed.
func (q *Prompter) Changed() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}

// Pending returns the waiting prompts, oldest first.
func (q *Prompter) Pending() []Prompt {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Prompt, len(q.queue))
	for i, p := range q.queue {
		out[i] = p.p
	}
	return out
}

// Ask queues p and waits for its answer.
func (q *Prompter) Ask(ctx context.Context, p Prompt) (Answer, error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return Answer{Choice: Refuse}, ErrPromptClosed
	}
	q.seq++
	p.ID = fmt.Sprintf("prompt_%d", q.seq)
	p.Deadline = q.now().Add(q.timeout)
	if len(p.Choices) == 0 {
		p.Choices = []Choice{Once, Session, Always, Refuse}
	}
	pd := &pending{p: p, answer: make(chan Answer, 1)}
	q.queue = append(q.queue, pd)
	q.notify()
	q.mu.Unlock()

	t := time.NewTimer(q.timeout)
	defer t.Stop()
	var err error
	select {
	case a := <-pd.answer:
		return a, nil
	case <-t.C:
		err = ErrPromptTimeout
	case <-ctx.Done():
		err = fmt.Errorf("gate: prompt abandoned: %w", ctx.Err())
		if errors.Is(context.Cause(ctx), ErrWithdrawn) {
			err = ErrWithdrawn
		}
	case <-q.done:
		err = ErrPromptClosed
	}
	// An answer may have raced the failure; if it was taken, honour it,
	// unless the call itself is gone.
	if !q.remove(pd) {
		select {
		case a := <-pd.answer:
			if err != ErrPromptClosed && err != ErrWithdrawn {
				return a, nil
			}
		default:
		}
	}
	return Answer{Choice: Refuse}, err
}

// remove takes pd off the queue, reporting whether it was still there.
func (q *Prompter) remove(pd *pending) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.Index(q.queue, pd)
	if i < 0 {
		return false
	}
	q.queue = slices.Delete(q.queue, i, i+1)
	q.notify()
	return true
}

// Answer answers the pending prompt id. An invalid answer is refused with
// ErrBadAnswer and the prompt stays pending.
func (q *Prompter) Answer(id string, a Answer) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	i := slices.IndexFunc(q.queue, func(p *pending) bool { return p.p.ID == id })
	if i < 0 {
		return ErrNoSuchPrompt
	}
	pd := q.queue[i]
	if !slices.Contains(pd.p.Choices, a.Choice) {
		return fmt.Errorf("%w: choice %q is not offered", ErrBadAnswer, a.Choice)
	}
	if strings.TrimSpace(a.Why) != "" && a.Choice != Refuse {
		return fmt.Errorf("%w: a reason goes only with a denial", ErrBadAnswer)
	}
	if a.Scope != 0 && (a.Choice != Always || a.Scope < 0 || a.Scope >= len(pd.p.Scopes)) {
		return fmt.Errorf("%w: scope %d is not offered", ErrBadAnswer, a.Scope)
	}
	if len(a.EditedArguments) > 0 {
		t := bytes.TrimSpace(a.EditedArguments)
		if len(t) == 0 || t[0] != '{' || !json.Valid(t) {
			return fmt.Errorf("%w: edited arguments must be a JSON object", ErrBadAnswer)
		}
	}
	q.queue = slices.Delete(q.queue, i, i+1)
	pd.answer <- a
	q.notify()
	return nil
}

// Close denies every pending prompt and every later one: the window that
// answers them is gone.
func (q *Prompter) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.closed = true
	close(q.done)
	q.queue = nil
	q.notify()
}
