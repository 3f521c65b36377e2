-- The web console's sign-in state. Session ids and link tokens are stored only as their
-- SHA-256; key_hash is the signed-in API key's hash (as api_keys.hash), re-checked on every
-- request so that revoking the key or disabling its user ends the session.
CREATE TABLE console_sessions (
    id_hash    BYTEA       PRIMARY KEY,
    org_id     BIGINT      NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    key_hash   BYTEA       NOT NULL,
    csrf       TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);

CREATE TABLE console_login_links (
    token_hash BYTEA       PRIMARY KEY,
    org_id     BIGINT      NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    key_hash   BYTEA       NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    used_at    TIMESTAMPTZ
);
