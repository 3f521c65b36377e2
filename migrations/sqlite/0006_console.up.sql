-- The web console's sign-in state. Session ids and link tokens are stored only as their
-- SHA-256; key_hash is the signed-in API key's hash (as api_keys.hash), re-checked on every
-- request so that revoking the key or disabling its user ends the session. Times are unix
-- microseconds, as everywhere in this schema.
CREATE TABLE console_sessions (
    id_hash    BLOB    PRIMARY KEY,
    org_id     INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    key_hash   BLOB    NOT NULL,
    csrf       TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);

CREATE TABLE console_login_links (
    token_hash BLOB    PRIMARY KEY,
    org_id     INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    key_hash   BLOB    NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
