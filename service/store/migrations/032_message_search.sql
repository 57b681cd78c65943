-- Search across conversations: a trigram FTS5 index over what people read
-- (user and assistant messages), so the window's find box matches any
-- substring of three or more characters, case-insensitively, in sessions
-- it has never opened. The index keeps its own copy of the text; triggers
-- keep it in step with messages (cleared and deleted sessions drop out).
CREATE VIRTUAL TABLE messages_fts USING fts5(content, tokenize = 'trigram');

INSERT INTO messages_fts(rowid, content)
    SELECT id, content FROM messages WHERE role IN ('user', 'assistant') AND content <> '';

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
    WHEN new.role IN ('user', 'assistant') AND new.content <> ''
BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role ON messages
BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
    INSERT INTO messages_fts(rowid, content)
        SELECT new.id, new.content WHERE new.role IN ('user', 'assistant') AND new.content <> '';
END;
