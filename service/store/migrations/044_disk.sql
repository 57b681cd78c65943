-- Bounded disk (numbered after the issue that added it).
--
-- The search index keeps no copy of the text: a contentless FTS5 table read
-- back through messages by rowid. The old index (032) stored every user and
-- assistant message a second time in messages_fts_content, and every
-- position of every trigram: this one keeps only which messages hold a
-- trigram (detail=none) and no sizes (columnsize=0), a fifth of the size; a
-- search asks for the messages holding trigrams of the text and then checks
-- their text (service/store/search.go). A row leaves the index by FTS5's
-- 'delete' command, given the text it was indexed with: the message's text,
-- which the triggers below see as it was. The messages the old index covered
-- (up to messages_fts_upto) are indexed again here; later ones by the next
-- batch, as before (033).
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content = '', tokenize = 'trigram', detail = none, columnsize = 0);

INSERT INTO messages_fts(rowid, content)
    SELECT id, content FROM messages
    WHERE id <= (SELECT upto FROM messages_fts_upto) AND role IN ('user', 'assistant') AND content <> '';

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
    WHEN old.id <= (SELECT upto FROM messages_fts_upto) AND old.role IN ('user', 'assistant') AND old.content <> ''
BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role ON messages
    WHEN old.id <= (SELECT upto FROM messages_fts_upto)
BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.role IN ('user', 'assistant') AND old.content <> '';
    INSERT INTO messages_fts(rowid, content)
        SELECT new.id, new.content WHERE new.role IN ('user', 'assistant') AND new.content <> '';
END;

-- Turns: the index of running turns holds only those (the old index of every
-- turn's status goes). The table keeps its rowid: a session's versions of a
-- turn are ordered by it (035, service/store/branches.go).
CREATE TABLE turns_new (
    id                TEXT PRIMARY KEY,
    session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    status            TEXT NOT NULL, -- running | done | failed | cancelled | interrupted
    error_code        TEXT NOT NULL DEFAULT '',
    started_at        TEXT NOT NULL,
    ended_at          TEXT,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    requests          INTEGER NOT NULL DEFAULT 0,
    parent_id         TEXT NOT NULL DEFAULT ''
);
INSERT INTO turns_new(rowid, id, session_id, status, error_code, started_at, ended_at, prompt_tokens, completion_tokens, requests, parent_id)
    SELECT rowid, id, session_id, status, error_code, started_at, ended_at, prompt_tokens, completion_tokens, requests, parent_id FROM turns;
DROP TABLE turns;
ALTER TABLE turns_new RENAME TO turns;
CREATE INDEX turns_running ON turns(session_id) WHERE status = 'running';
CREATE INDEX turns_session ON turns(session_id, parent_id);

-- Events past the replay window are deleted but a session's newest
-- (service/store/compact.go): how far, per session. A Last-Event-ID before
-- upto_seq is answered with stream.reset; at is the cutoff of the session's
-- last compaction.
CREATE TABLE events_compacted (
    session_id TEXT PRIMARY KEY,
    upto_seq   INTEGER NOT NULL,
    at         TEXT NOT NULL
) WITHOUT ROWID;
