package gate

import (
	"context"
	"testing"

	"jarvis/app/audit"
)

// TestWithdrawnCallsNeverRun: a call whose context is cancelled with
// ErrWithdrawn runs nothing, whether it was allowed by a rule or answered
// in the prompt just as it was withdrawn, and is audited as withdrawn.
func TestWithdrawnCallsNeverRun(t *testing.T) {
	f := newFixture(t, Policy{Rules: []Rule{{Tool: "notify", Action: Allow}}}, PrompterOptions{})
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(ErrWithdrawn)
	o := f.gate.Handle(ctx, req("notify", `{"title":"hi"}`, ""), f.exec)
	if o.OK || !o.Withdrawn || len(f.executed()) != 0 {
		t.Fatalf("allowed-by-rule call after withdrawal: %+v, ran %v", o, f.executed())
	}
	if e := f.lastAudit(); e.Decision != audit.Withdrawn || e.DecidedBy != audit.ByService {
		t.Fatalf("audit %+v", e)
	}

	// A prompt answered "once" in the same instant the call is withdrawn.
	ctx, cancel = context.WithCancelCause(context.Background())
	ch := f.handle(ctx, req("write_file", `{"path":"a.txt","content":"x"}`, ""))
	p := f.waitPending(1)[0]
	cancel(ErrWithdrawn)
	_ = f.prompter.Answer(p.ID, Answer{Choice: Once}) // may or may not find it
	o = wait(t, ch)
	if o.OK || !o.Withdrawn || len(f.executed()) != 0 {
		t.Fatalf("answered-while-withdrawn call: %+v, ran %v", o, f.executed())
	}
	if e := f.lastAudit(); e.Decision != audit.Withdrawn {
		t.Fatalf("audit %+v", e)
	}
	f.verify(2)
}
