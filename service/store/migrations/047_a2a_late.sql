-- A2A tasks whose turn ended before they did (issue 43): their answer may
-- still come until `until`. Kept here, not only in the process that ran the
-- turn, so that a restart does not lose it: the next service follows each
-- with tasks/get (service/a2art, late.go). A row is deleted by whoever takes
-- the answer, once.
CREATE TABLE a2a_late (
    agent_id   TEXT NOT NULL,
    task_id    TEXT NOT NULL,
    session_id TEXT NOT NULL,
    until      TEXT NOT NULL,
    PRIMARY KEY (agent_id, task_id)
);
