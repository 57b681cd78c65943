package store

import (
	"context"
	"path/filepath"
	"testing"
)

// TestPruneExternalAudit: external_audit is cut to its retention cap,
// oldest rows first, but each agent's newest accepted row (its last
// callback time) survives.
func TestPruneExternalAudit(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "j.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	add := func(agent string, accepted bool, n int) {
		for i := 0; i < n; i++ {
			if err := s.AddExternalAudit(ctx, ExternalAudit{SessionID: "s", AgentID: agent, Auth: "token", Accepted: accepted}); err != nil {
				t.Fatal(err)
			}
		}
	}
	add("old", true, 1) // the oldest row, and old's last accepted callback
	add("a", true, 3)
	add("a", false, 50)
	n, err := s.PruneExternalAudit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var rows int
	s.r.QueryRowContext(ctx, `SELECT count(*) FROM external_audit`).Scan(&rows)
	// 54 rows: the 10 newest stay, and so do old's and a's newest accepted rows.
	if n != 42 || rows != 12 {
		t.Fatalf("deleted %d, %d rows left; want 42 deleted, 12 left", n, rows)
	}
	if st, err := s.ExternalAgentStatus(ctx, "old"); err != nil || st.LastCallbackAt == "" {
		t.Fatalf("old agent's last callback: %+v %v", st, err)
	}
	if n, _ := s.PruneExternalAudit(ctx, 10); n != 0 {
		t.Fatalf("a second pruning deleted %d", n)
	}
}
