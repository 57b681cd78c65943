package service_test

import (
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

// TestRejectedCallbacksAreAggregated: a flood of callbacks with a wrong
// token, or for sessions that do not exist, adds a bounded number of
// external_audit rows (the first few of each kind in a window, then one
// row with the count), every attempt is counted, and a valid callback in
// the middle of the flood is delivered and audited on its own.
func TestRejectedCallbacksAreAggregated(t *testing.T) {
	peer := newExtPeer(t, nil)
	e := newExternalEnv(t, extAgent("ext", peer.srv.URL+"/v1/assistant/input", ""))
	sid := e.extSession("ext", "FLOOD-1")
	cb := e.extCallbackURL(sid)
	bad := extWithToken(cb, "xcb_wrong")
	const wrong, unknown = 2000, 600
	var wg sync.WaitGroup
	work := make(chan string)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range work {
				resp, err := http.Post(u, "text/plain", strings.NewReader("spam"))
				if err != nil {
					t.Error(err)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusNotFound {
					t.Errorf("bad callback answered %d", resp.StatusCode)
				}
			}
		}()
	}
	for i := 0; i < wrong; i++ {
		work <- bad
		if i == wrong/2 {
			if r := extPost(t, cb, "text/plain", []byte("the real reply"), nil); r.status != 200 {
				t.Fatalf("valid callback during the flood: %d %+v", r.status, r.err)
			}
		}
	}
	for i := 0; i < unknown; i++ {
		work <- strings.Replace(bad, "/FLOOD-1/", fmt.Sprintf("/NOPE-%d/", i), 1)
	}
	close(work)
	wg.Wait()
	if tr := e.extTranscript(sid); len(tr.Messages) != 1 || tr.Messages[0].Text != "the real reply" {
		t.Fatalf("transcript %+v", tr.Messages)
	}
	e.stop() // writes the counts of the current window

	db, err := sql.Open("sqlite3", "file:"+filepath.Join(e.dir, "jarvis.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows, attempts, accepted int
	if err := db.QueryRow(`SELECT count(*), COALESCE(sum(attempts), 0), COALESCE(sum(accepted), 0) FROM external_audit`).Scan(&rows, &attempts, &accepted); err != nil {
		t.Fatal(err)
	}
	if attempts != wrong+unknown+1 || accepted != 1 {
		t.Errorf("%d attempts (%d accepted) counted, want %d (1)", attempts, accepted, wrong+unknown+1)
	}
	if rows > 200 {
		t.Errorf("%d external_audit rows for %d callbacks", rows, wrong+unknown+1)
	}
	var wrongRows, wrongCount int
	db.QueryRow(`SELECT count(*), sum(attempts) FROM external_audit WHERE session_id = ? AND reason = 'wrong token'`, sid).Scan(&wrongRows, &wrongCount)
	if wrongCount != wrong || wrongRows > 10 {
		t.Errorf("wrong token: %d rows counting %d attempts", wrongRows, wrongCount)
	}
}
