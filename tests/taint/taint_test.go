// Package taint_test runs the taint-aware gate's suites (internal/taintlab)
// through the real service and the real headless gate: no secret leaves
// without a prompt that names its source, and benign tasks that read nothing
// untrusted ask no more than before.
package taint_test

import (
	"testing"

	"jarvis/internal/taintlab"
)

// TestInjectionSuite: hostile content from every untrusted source tries to
// send a secret out through every outbound tool, under broad "always allow"
// rules. Headless, the call that would send it is denied, with a reason that
// names the source, and the secret reaches no browser, clipboard or agent.
func TestInjectionSuite(t *testing.T) {
	scenarios := taintlab.Injection()
	if len(scenarios) < 40 {
		t.Fatalf("%d scenarios, want at least 40", len(scenarios))
	}
	for _, s := range scenarios {
		t.Run(s.Name, func(t *testing.T) {
			r, err := s.Run()
			if err != nil {
				t.Fatal(err)
			}
			if r.Leaked {
				t.Fatalf("the secret left the machine: %+v", r)
			}
			if r.Asked < 1 || r.Named < 1 {
				t.Fatalf("the outbound call %s was not stopped by a prompt naming %q: %+v", s.SinkTool, s.NamedSource, r)
			}
		})
	}
}

// TestUtilitySuite: benign tasks under the same rules. A task that reads
// nothing untrusted asks nothing (and what it sends on purpose does leave,
// which shows the suite would see a leak); a task that does read untrusted
// content may ask before sending, and those prompts are counted.
func TestUtilitySuite(t *testing.T) {
	tasks := taintlab.Utility()
	if len(tasks) < 20 {
		t.Fatalf("%d tasks, want at least 20", len(tasks))
	}
	extra := 0
	for _, task := range tasks {
		t.Run(task.Name, func(t *testing.T) {
			r, err := task.Run()
			if err != nil {
				t.Fatal(err)
			}
			if r.Rows == 0 {
				t.Fatal("the task made no call")
			}
			if task.ReadsUntrusted {
				extra += r.Asked
				return
			}
			if r.Asked != 0 || r.Denied != 0 {
				t.Fatalf("a task that read nothing untrusted was stopped: %+v", r)
			}
			if task.Sends != "" && !r.Leaked {
				t.Fatalf("what the task sends on purpose (%q) did not arrive: %+v", task.Sends, r)
			}
		})
	}
	t.Logf("extra prompts on the tasks that read untrusted content: %d", extra)
}
