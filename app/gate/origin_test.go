package gate

import (
	"context"
	"strings"
	"testing"
	"time"

	"jarvis/app/audit"
)

// "Always allow" stores where the rule came from: the conversation (its id
// and the title the window showed) and when. The Permissions page says so.
func TestAlwaysAllowRecordsWhereTheRuleCameFrom(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	before := time.Now().UTC().Add(-time.Second)
	ch := f.handle(context.Background(), req("write_file", `{"path":"notes/todo.txt","content":"milk"}`, ""))
	f.answer(Answer{Choice: Always, Chat: "Pack for the lake trip"})
	if o := wait(t, ch); !o.OK {
		t.Fatalf("not run: %+v", o)
	}
	rules := f.gate.Policy().Rules
	if len(rules) != 1 || rules[0].Origin == nil {
		t.Fatalf("the saved rule says nothing of where it came from: %+v", rules)
	}
	o := rules[0].Origin
	if o.Kind != OriginPrompt || o.SessionID != "j_1" || o.Chat != "Pack for the lake trip" || o.At.Before(before) {
		t.Fatalf("origin %+v, want the prompt of j_1 \"Pack for the lake trip\" after %s", o, before)
	}
}

// Deny with a reason: the reason is in the outcome (the window sends it to
// the service, which gives it to the model) and in the audit row.
func TestDenyCarriesTheUsersReason(t *testing.T) {
	f := newFixture(t, Policy{}, PrompterOptions{})
	ch := f.handle(context.Background(), req("write_file", `{"path":"notes.txt","content":"x"}`, ""))
	f.answer(Answer{Choice: Refuse, Why: "  write to notes-new.txt instead  "})
	o := wait(t, ch)
	if o.OK || o.DecidedBy != audit.ByUser || o.UserReason != "write to notes-new.txt instead" {
		t.Fatalf("outcome %+v, want a denial by the user with the reason trimmed", o)
	}
	if row := f.lastAudit(); !strings.Contains(row.Reason, "write to notes-new.txt instead") {
		t.Fatalf("audit reason %q lacks the user's reason", row.Reason)
	}
	// A reason with an approval is refused: it goes only with a denial.
	ch = f.handle(context.Background(), req("write_file", `{"path":"notes.txt","content":"x"}`, ""))
	p := f.waitPending(1)[0]
	if err := f.prompter.Answer(p.ID, Answer{Choice: Once, Why: "because"}); err == nil {
		t.Fatal("a reason with an approval was accepted")
	}
	f.answer(Answer{Choice: Refuse})
	if o := wait(t, ch); o.UserReason != "" {
		t.Fatalf("a denial without a reason has %q", o.UserReason)
	}
}
