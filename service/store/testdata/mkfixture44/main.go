// Command mkfixture44 makes a small database with this build's store: the
// fixture the migrations of later builds are tested from.
package main

import (
	"context"
	"database/sql"
	"log"
	"os"

	"jarvis/service/store"

	_ "github.com/mattn/go-sqlite3"
)

func main() {
	ctx := context.Background()
	path := os.Args[1]
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}
	_, err = st.CreateSession(ctx, store.Session{ID: "g_fix_trip", AgentID: "general", Name: "Trip planning"})
	must(err)
	_, err = st.CreateSession(ctx, store.Session{ID: "g_fix_code", JarvisSessionID: "j_fix_code", AgentID: "coder"})
	must(err)
	_, err = st.CreateSession(ctx, store.Session{ID: "g_fix_gone", AgentID: "general"})
	must(err)
	for _, m := range []store.Message{
		{SessionID: "g_fix_trip", TurnID: "t_fix_1", Role: "user", Content: "Plan a trip to Lisbon in May"},
		{SessionID: "g_fix_trip", TurnID: "t_fix_1", Role: "assistant", Content: "", ToolCalls: `[{"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"notes.md\"}"}}]`},
		{SessionID: "g_fix_trip", TurnID: "t_fix_1", Role: "tool", Content: "notes: trams, pastries", ToolCallID: "call_1"},
		{SessionID: "g_fix_trip", TurnID: "t_fix_1", Role: "assistant", Content: "Lisbon has trams; take tram 28 early."},
		{SessionID: "g_fix_code", TurnID: "t_fix_2", Role: "user", Content: "Why does Ünïcode folding differ?"},
		{SessionID: "g_fix_code", TurnID: "t_fix_2", Role: "status", Content: "Sent to external agent"},
		{SessionID: "g_fix_gone", TurnID: "t_fix_3", Role: "user", Content: "Lisbon again, then deleted"},
	} {
		_, err := st.AddMessage(ctx, m)
		must(err)
	}
	must(st.DeleteSession(ctx, "g_fix_gone"))
	must(st.Close())
	db, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=on")
	must(err)
	defer db.Close()
	for _, q := range []string{
		`INSERT INTO turns(id, session_id, status, started_at, ended_at) VALUES ('t_fix_1', 'g_fix_trip', 'done', '2026-11-20T10:00:00.000000000Z', '2026-11-20T10:00:05.000000000Z')`,
		`INSERT INTO turns(id, session_id, status, started_at) VALUES ('t_fix_2', 'g_fix_code', 'running', '2026-11-20T11:00:00.000000000Z')`,
		`INSERT INTO events(session_id, seq, type, data, created_at) VALUES
		 ('g_fix_trip', 1, 'user.message', '{"text":"Plan a trip to Lisbon in May","turn_id":"t_fix_1"}', '2026-11-20T10:00:00.000000000Z'),
		 ('g_fix_trip', 2, 'assistant.delta', '{"text":"Lisbon has trams;","turn_id":"t_fix_1"}', '2026-11-20T10:00:04.000000000Z'),
		 ('g_fix_trip', 3, 'assistant.final', '{"text":"Lisbon has trams; take tram 28 early.","turn_id":"t_fix_1"}', '2026-11-20T10:00:05.000000000Z'),
		 ('g_fix_code', 1, 'user.message', '{"text":"Why does Ünïcode folding differ?","turn_id":"t_fix_2"}', '2026-11-20T11:00:00.000000000Z')`,
		`INSERT INTO tool_calls(id, model_call_id, session_id, turn_id, name, arguments, risk, status, ok, result, created_at) VALUES
		 ('tc_fix_1', 'call_1', 'g_fix_trip', 't_fix_1', 'read_file', '{"path":"notes.md"}', 'read', 'done', 1, 'notes: trams, pastries', '2026-11-20T10:00:02.000000000Z')`,
		`PRAGMA wal_checkpoint(TRUNCATE)`,
		`VACUUM`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			log.Fatalf("%s: %v", q, err)
		}
	}
}
