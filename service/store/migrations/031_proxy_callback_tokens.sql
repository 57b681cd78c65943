-- Proxy agents' callback secrets, kept as external agents' are: a token per
-- call, of which only the SHA-256 is stored, valid for that agent, session
-- and call until it expires (the call's timeout plus the time a late answer
-- is still recorded). They replace the per-install key that derived every
-- session's token and was stored in plain text: URLs made from it stop
-- working.
CREATE TABLE proxy_callback_tokens (
    token_hash TEXT PRIMARY KEY, -- hex SHA-256 of the token
    agent_id   TEXT NOT NULL,
    session_id TEXT NOT NULL, -- not a reference: a Test call has no stored session
    call_id    TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX proxy_callback_tokens_call ON proxy_callback_tokens(agent_id, session_id, call_id);
CREATE INDEX proxy_callback_tokens_expiry ON proxy_callback_tokens(expires_at);

-- Deleting a session revokes its callback URLs.
CREATE TRIGGER proxy_callback_tokens_revoke AFTER UPDATE OF deleted_at ON sessions
WHEN NEW.deleted_at IS NOT NULL
BEGIN
    DELETE FROM proxy_callback_tokens WHERE session_id = NEW.id;
END;

DELETE FROM proxy_values WHERE name = 'callback_key';
