-- Scheduled tasks, their runs and the Inbox (service/tasks).
-- tasks.spec is the task as given (api.Task, JSON); settled_until is the
-- newest occurrence run or skipped: the scheduler never looks before it.
CREATE TABLE tasks (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    spec          TEXT NOT NULL,
    source        TEXT NOT NULL,
    settled_until TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

-- One row per occurrence claimed: the primary key is the claim, so that two
-- processes on one database never run the same occurrence.
CREATE TABLE task_runs (
    task_id     TEXT NOT NULL,
    occurrence  TEXT NOT NULL,
    id          TEXT NOT NULL UNIQUE,
    status      TEXT NOT NULL,
    caught_up   INTEGER NOT NULL DEFAULT 0,
    owner       TEXT NOT NULL DEFAULT '',
    session_id  TEXT NOT NULL DEFAULT '',
    turn_id     TEXT NOT NULL DEFAULT '',
    summary     TEXT NOT NULL DEFAULT '',
    started_at  TEXT NOT NULL,
    ended_at    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (task_id, occurrence)
);

CREATE TABLE inbox (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    title       TEXT NOT NULL,
    body        TEXT NOT NULL DEFAULT '',
    session_id  TEXT NOT NULL DEFAULT '',
    task_id     TEXT NOT NULL DEFAULT '',
    run_id      TEXT NOT NULL DEFAULT '',
    call_id     TEXT NOT NULL DEFAULT '',
    state       TEXT NOT NULL,
    read        INTEGER NOT NULL DEFAULT 0,
    done        INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE INDEX inbox_newest ON inbox(done, created_at);
