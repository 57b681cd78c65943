-- The search index (032) is filled off the turns' commits: the trigger that
-- indexed each user and assistant message in the transaction storing it made
-- FTS5 write a new index segment at every commit, about half of a turn's
-- commit time. The store indexes new messages in batches instead
-- (service/store/searchindex.go): in the background and before every search.
-- messages_fts_upto is the newest message id the index covers; message ids
-- only grow (AUTOINCREMENT), so the messages after it are the ones to index.
DROP TRIGGER messages_fts_insert;

CREATE TABLE messages_fts_upto (upto INTEGER NOT NULL);
INSERT INTO messages_fts_upto(upto) SELECT COALESCE(MAX(id), 0) FROM messages;

-- A changed message is re-indexed at once only when the index already has it;
-- a newer one is indexed, as it is then, by the next batch.
DROP TRIGGER messages_fts_update;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, role ON messages
    WHEN old.id <= (SELECT upto FROM messages_fts_upto)
BEGIN
    DELETE FROM messages_fts WHERE rowid = old.id;
    INSERT INTO messages_fts(rowid, content)
        SELECT new.id, new.content WHERE new.role IN ('user', 'assistant') AND new.content <> '';
END;
