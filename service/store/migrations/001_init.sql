-- Sessions: one conversation with one agent. id is general_session_id.
CREATE TABLE sessions (
    id                TEXT PRIMARY KEY,
    jarvis_session_id TEXT UNIQUE,
    agent_id          TEXT NOT NULL,
    name              TEXT NOT NULL DEFAULT '',
    attributes        TEXT NOT NULL DEFAULT '{}',
    last_snippet      TEXT NOT NULL DEFAULT '',
    pinned_at         TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    deleted_at        TEXT
);
CREATE INDEX sessions_agent_updated ON sessions(agent_id, updated_at DESC);

-- Messages: the transcript a model sees (user, assistant with tool calls, tool results)
-- plus status lines that only people see (role 'status').
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn_id      TEXT NOT NULL DEFAULT '',
    role         TEXT NOT NULL,
    content      TEXT NOT NULL DEFAULT '',
    tool_calls   TEXT NOT NULL DEFAULT '',
    tool_call_id TEXT NOT NULL DEFAULT '',
    meta         TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL
);
CREATE INDEX messages_session ON messages(session_id, id);

-- Events: everything published on a session's stream, replayable by seq (the SSE id).
CREATE TABLE events (
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    type       TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;

-- Turns: one user message and everything the agent did to answer it.
CREATE TABLE turns (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    status     TEXT NOT NULL, -- running | done | failed | cancelled | interrupted
    error_code TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL,
    ended_at   TEXT
);
CREATE INDEX turns_status ON turns(status);

-- Tool calls sent to the desktop, and their results.
CREATE TABLE tool_calls (
    id            TEXT PRIMARY KEY, -- the service's id (the desktop's view)
    model_call_id TEXT NOT NULL DEFAULT '', -- the model's id for the call
    session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    turn_id       TEXT NOT NULL,
    name        TEXT NOT NULL,
    arguments   TEXT NOT NULL,
    risk        TEXT NOT NULL,
    reason      TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL, -- pending | done | timeout | cancelled | interrupted
    ok          INTEGER,
    result      TEXT NOT NULL DEFAULT '',
    error       TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    resolved_at TEXT
);
CREATE INDEX tool_calls_session ON tool_calls(session_id);
