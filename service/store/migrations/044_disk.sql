-- Bounded disk (numbered after the issue that added it).
--
-- The search index keeps no copy of the text: a contentless FTS5 table whose
-- rows can still be deleted (contentless_delete), read back through
-- messages by rowid. The old index (032) stored every user and assistant
-- message a second time in messages_fts_content, and every position of
-- every trigram: this one keeps only which messages hold a trigram
-- (detail=none), a third of the size; a search asks for the messages holding
-- trigrams of the text and then checks their text (service/store/search.go). The messages it covered (up to
-- messages_fts_upto) are indexed again here; later ones by the next batch,
-- as before (033).
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
DROP TABLE messages_fts;
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content = '', contentless_delete = 1, tokenize = 'trigram', detail = none);

INSERT INTO messages_fts(rowid, content)
    SELECT id, content FROM messages
    WHERE id <= (SELECT upto FROM messages_fts_upto) AND role IN ('user', 'assistant') AND content <> '';

-- Only rows the index holds are deleted from it (a contentless index cannot
-- tell which rows it has).
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
    WHEN old.id <= (SELECT upto FROM messages_fts_upto) AND old.role IN ('user', 'assistant') AND old.content <> ''
BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role ON messages
    WHEN old.id <= (SELECT upto FROM messages_fts_upto)
BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id AND old.role IN ('user', 'assistant') AND old.content <> '';
    INSERT INTO messages_fts(rowid, content)
        SELECT new.id, new.content WHERE new.role IN ('user', 'assistant') AND new.content <> '';
END;

-- Events past the replay window are deleted but a session's newest
-- (service/store/compact.go): how far, per session. A Last-Event-ID before
-- upto_seq is answered with stream.reset; at is the cutoff of the session's
-- last compaction.
CREATE TABLE events_compacted (
    session_id TEXT PRIMARY KEY,
    upto_seq   INTEGER NOT NULL,
    at         TEXT NOT NULL
) WITHOUT ROWID;
