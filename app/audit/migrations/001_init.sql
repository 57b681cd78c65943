-- The audit log: one row per tool call, hash-chained. Rows are never
-- updated or deleted; the triggers refuse it and Verify detects it when
-- the triggers are dropped behind the application's back.
CREATE TABLE audit_log (
	id               INTEGER PRIMARY KEY AUTOINCREMENT,
	time             TEXT    NOT NULL, -- UTC, fixed width, sorts as text
	session_id       TEXT    NOT NULL DEFAULT '',
	tool_call_id     TEXT    NOT NULL DEFAULT '',
	tool             TEXT    NOT NULL,
	arguments        TEXT    NOT NULL, -- JSON
	edited_arguments TEXT    NOT NULL DEFAULT '', -- JSON, when the user edited them
	proposed_risk    TEXT    NOT NULL DEFAULT '',
	class            TEXT    NOT NULL,
	decision         TEXT    NOT NULL, -- allowed | denied
	decided_by       TEXT    NOT NULL, -- policy | user | session | timeout | error
	reason           TEXT    NOT NULL DEFAULT '',
	result           TEXT    NOT NULL DEFAULT '',
	error            TEXT    NOT NULL DEFAULT '',
	duration_ms      INTEGER NOT NULL DEFAULT 0,
	prev_hash        TEXT    NOT NULL,
	hash             TEXT    NOT NULL UNIQUE
);

CREATE INDEX audit_log_time ON audit_log(time);
CREATE INDEX audit_log_tool ON audit_log(tool);
CREATE INDEX audit_log_session ON audit_log(session_id);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
	SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
	SELECT RAISE(ABORT, 'audit_log is append-only');
END;
