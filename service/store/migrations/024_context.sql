-- Context management (long-lived sessions). Numbered after the issue that
-- added it, so that migrations added meanwhile elsewhere keep their numbers.

-- Summaries: what the model is sent in place of the messages they cover
-- (the transcript keeps every message). A later summary folds the earlier
-- one in; history for a request is the latest summary and the messages
-- after upto_message_id.
CREATE TABLE summaries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id      TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    from_message_id INTEGER NOT NULL, -- first message covered this time
    upto_message_id INTEGER NOT NULL, -- last message covered (all before it too)
    content         TEXT NOT NULL,
    tokens_before   INTEGER NOT NULL, -- context before compaction
    tokens_after    INTEGER NOT NULL, -- and after
    messages        INTEGER NOT NULL, -- model-visible messages summarized this time
    window          INTEGER NOT NULL, -- the model's window then
    reason          TEXT NOT NULL,    -- budget | overflow | manual
    created_at      TEXT NOT NULL
);
CREATE INDEX summaries_session ON summaries(session_id, id);

-- Usage the model server reported, summed over a turn's requests.
ALTER TABLE turns ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN completion_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE turns ADD COLUMN requests INTEGER NOT NULL DEFAULT 0;

-- The session's context use: tokens of its last measured request (prompt
-- and reply), on top of summary context_summary_id (0: none), covering the
-- messages up to context_upto_id (later ones are estimated).
ALTER TABLE sessions ADD COLUMN context_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN context_summary_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN context_upto_id INTEGER NOT NULL DEFAULT 0;
