-- Round tables (seed 003): registered agents, runs and every agent's answers.
-- An agent's API key is never stored here: api_key_ref names it in the OS
-- keyring (or the JARVIS_SECRET_<REF> environment override).
CREATE TABLE roundtable_agents (
    name            TEXT PRIMARY KEY,
    domain          TEXT NOT NULL,
    base_url        TEXT NOT NULL,
    capabilities    TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    mode            TEXT NOT NULL DEFAULT 'sync',
    api_key_ref     TEXT NOT NULL DEFAULT '',   -- keyring ref when a key was registered, else ''
    timeout_seconds INTEGER NOT NULL DEFAULT 0, -- per-call wait; 0 = the service default
    health          TEXT NOT NULL DEFAULT 'unknown', -- unknown | ok | failing | unhealthy
    health_detail   TEXT NOT NULL DEFAULT '',
    health_at       TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);

-- One deliberation. session_id is the stream its progress went to.
CREATE TABLE roundtable_runs (
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL DEFAULT '',
    turn_id      TEXT NOT NULL DEFAULT '',
    source       TEXT NOT NULL,               -- api | tool | agent
    task         TEXT NOT NULL,               -- JSON: the roundtable.Task
    participants TEXT NOT NULL DEFAULT '[]',  -- JSON array of agent names
    status       TEXT NOT NULL,               -- running, a roundtable.Status, failed or interrupted
    outcome      TEXT NOT NULL DEFAULT '',
    summary      TEXT NOT NULL DEFAULT '',
    result       TEXT NOT NULL DEFAULT '',    -- JSON: the roundtable.Result, once finished
    created_at   TEXT NOT NULL,
    finished_at  TEXT
);
CREATE INDEX roundtable_runs_session ON roundtable_runs(session_id, created_at);
CREATE INDEX roundtable_runs_status ON roundtable_runs(status);

-- Every agent's answers in a run (analysis, challenge, concession, vote) and
-- every exclusion, in the order the result lists them.
CREATE TABLE roundtable_answers (
    run_id TEXT NOT NULL REFERENCES roundtable_runs(id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    agent  TEXT NOT NULL,
    phase  TEXT NOT NULL,
    kind   TEXT NOT NULL, -- analysis | challenge | concession | vote | exclusion
    data   TEXT NOT NULL, -- JSON of the sanitised answer
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE INDEX roundtable_answers_agent ON roundtable_answers(agent);
