-- The chain is keyed from here on: a row's hash is an HMAC-SHA256 under a
-- key kept outside this file. Rows that exist now were chained with plain
-- SHA-256; legacy_through is the last of them (0 for a new log). The head
-- anchor, kept apart from the log, records it too, so that it cannot be
-- raised here to pass rewritten rows off as legacy ones.
CREATE TABLE audit_chain (
	id             INTEGER PRIMARY KEY CHECK (id = 1),
	legacy_through INTEGER NOT NULL
);
INSERT INTO audit_chain (id, legacy_through) SELECT 1, COALESCE(max(id), 0) FROM audit_log;

CREATE TRIGGER audit_chain_no_update BEFORE UPDATE ON audit_chain
BEGIN
	SELECT RAISE(ABORT, 'audit_chain is fixed');
END;
