//go:build sqlite_fts5

package memory

import (
	"strings"
	"testing"
)

// In a transcript ("Ana: My kids love ..."), "my" is the speaker's: asked
// about Ana's kids, Ana's own line about her kids is about the same
// person's fact, not someone else's.
func TestSpeakerOwnsFirstPerson(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "memory/2026-01-05.md", "# 2026-01-05\n\nAna: My kids like the dinosaur museum.\n")
	writeFile(t, root, "memory/2026-01-06.md", "# 2026-01-06\n\nBen: Ana, the kids like cartoons on the weekend.\n")
	s := openStore(t, root, func(o *Options) { o.WordNetDir = "-" })
	res := search(t, s, "What do Ana's kids like?", "")
	if len(res) == 0 {
		t.Fatal("no results")
	}
	checkResult(t, root, res[0])
	if !strings.Contains(res[0].Excerpt, "dinosaur") {
		t.Errorf("first %q, want Ana's line about her kids", res[0].Excerpt)
	}

	// Without a speaker, "my" is still the user's.
	if got := speakerOf("- Number: my new one"); got != "" {
		t.Errorf("speakerOf(list item) = %q, want none", got)
	}
	if got := speakerOf("Ana Lopez: my dentist moved."); got != "ana lopez" {
		t.Errorf("speakerOf = %q, want \"ana lopez\"", got)
	}
}
