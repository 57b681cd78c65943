-- Rejected callbacks are aggregated: past the first few of a kind in a
-- window, one row counts the attempts (service: rejectAudit). Accepted
-- callbacks keep one row each (attempts 1). The table is pruned to a
-- retention cap, oldest first, keeping each agent's newest accepted row.
ALTER TABLE external_audit ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1;
