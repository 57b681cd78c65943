-- External agents (seed 000): callback secrets, delivery ids seen, the audit
-- trail of injected messages, and each agent's last forward / callback.

-- Callback secrets: the SHA-256 of each per-session token handed out in a
-- callbackUrl. Only hashes are stored; a process mints a new token for a
-- session when it has none in memory, and older ones stay valid until the
-- session is deleted (the trigger below), so late replies still land.
CREATE TABLE external_tokens (
    token_hash TEXT PRIMARY KEY, -- hex SHA-256 of the token
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX external_tokens_session ON external_tokens(session_id);

-- Deleting a session revokes its callback URLs, even if the session id is revived later.
CREATE TRIGGER external_tokens_revoke AFTER UPDATE OF deleted_at ON sessions
WHEN NEW.deleted_at IS NOT NULL
BEGIN
    DELETE FROM external_tokens WHERE session_id = NEW.id;
END;

-- Delivery ids (webhook-id or Idempotency-Key) already applied: a re-delivered
-- reply is answered 200 and adds nothing.
CREATE TABLE external_deliveries (
    session_id  TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    seen_at     TEXT NOT NULL,
    PRIMARY KEY (session_id, delivery_id)
) WITHOUT ROWID;
CREATE INDEX external_deliveries_seen ON external_deliveries(seen_at);

-- Audit: one row per callback, accepted or not. No secrets, no message text.
CREATE TABLE external_audit (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id  TEXT NOT NULL,
    agent_id    TEXT NOT NULL DEFAULT '',
    bytes       INTEGER NOT NULL,
    auth        TEXT NOT NULL,          -- token | signature | none | failed
    accepted    INTEGER NOT NULL,
    reason      TEXT NOT NULL DEFAULT '', -- why not accepted, or "duplicate"
    delivery_id TEXT NOT NULL DEFAULT '',
    message_id  INTEGER,
    sanitized   TEXT NOT NULL DEFAULT '', -- JSON of what was removed, or ''
    created_at  TEXT NOT NULL
);
-- The last accepted callback of an agent is its newest accepted row here.
CREATE INDEX external_audit_agent ON external_audit(agent_id, accepted);

-- Per agent: the last forward's result.
CREATE TABLE external_agent_status (
    agent_id            TEXT PRIMARY KEY,
    last_forward_at     TEXT NOT NULL DEFAULT '',
    last_forward_ok     INTEGER NOT NULL DEFAULT 0,
    last_forward_detail TEXT NOT NULL DEFAULT ''
);
