-- Proxy agents (seed 002): per-install values the proxy runtime keeps across
-- restarts: the key that derives per-session callback secrets, so that a
-- callback URL handed out before a restart stays valid, and the stable local
-- user id sent as the Agent Protocol userReference.
CREATE TABLE proxy_values (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    created_at TEXT NOT NULL
);
