CREATE TABLE orgs (
    id         BIGSERIAL   PRIMARY KEY,
    slug       TEXT        NOT NULL UNIQUE,
    name       TEXT        NOT NULL,
    settings   TEXT        NOT NULL DEFAULT '{}',
    disabled   BOOLEAN     NOT NULL DEFAULT false,
    created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE users (
    id         BIGSERIAL   PRIMARY KEY,
    org_id     BIGINT      NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    handle     TEXT        NOT NULL,
    role       TEXT        NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
    disabled   BOOLEAN     NOT NULL DEFAULT false,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (org_id, handle)
);

CREATE TABLE api_keys (
    id           TEXT        PRIMARY KEY,
    org_id       BIGINT      NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT        NOT NULL,
    prefix       TEXT        NOT NULL,
    key_hash     BYTEA       NOT NULL UNIQUE,
    read_only    BOOLEAN     NOT NULL DEFAULT false,
    expires_at   TIMESTAMPTZ,
    revoked_at   TIMESTAMPTZ,
    last_used_at TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX api_keys_org ON api_keys (org_id, created_at);

CREATE TABLE repos (
    id         BIGSERIAL   PRIMARY KEY,
    org_id     BIGINT      NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    slug       TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    UNIQUE (org_id, slug)
);

CREATE TABLE spaces (
    id             BIGSERIAL   PRIMARY KEY,
    org_id         BIGINT      NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    repo_id        BIGINT      NOT NULL REFERENCES repos (id) ON DELETE CASCADE,
    scope          TEXT        NOT NULL CHECK (scope IN ('team', 'personal')),
    user_id        BIGINT      REFERENCES users (id) ON DELETE CASCADE,
    version        BIGINT      NOT NULL DEFAULT 0,
    checksum       TEXT        NOT NULL,
    entry_count    INTEGER     NOT NULL DEFAULT 0,
    total_bytes    BIGINT      NOT NULL DEFAULT 0,
    purged_through BIGINT      NOT NULL DEFAULT 0,
    updated_at     TIMESTAMPTZ NOT NULL,
    CHECK ((scope = 'team') = (user_id IS NULL))
);
CREATE UNIQUE INDEX spaces_ref ON spaces (org_id, repo_id, scope, coalesce(user_id, 0));

CREATE TABLE entries (
    org_id     BIGINT      NOT NULL,
    space_id   BIGINT      NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    key        TEXT        NOT NULL,
    content    TEXT,
    checksum   TEXT        NOT NULL,
    size       INTEGER     NOT NULL,
    version    BIGINT      NOT NULL,
    deleted    BOOLEAN     NOT NULL DEFAULT false,
    author_id  BIGINT      REFERENCES users (id) ON DELETE SET NULL,
    client_id  TEXT        NOT NULL DEFAULT '',
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (space_id, key)
);
CREATE INDEX entries_version ON entries (space_id, version);
CREATE INDEX entries_tombstones ON entries (updated_at) WHERE deleted;

CREATE TABLE entry_versions (
    id         BIGSERIAL   PRIMARY KEY,
    org_id     BIGINT      NOT NULL,
    space_id   BIGINT      NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    key        TEXT        NOT NULL,
    version    BIGINT      NOT NULL,
    op         TEXT        NOT NULL CHECK (op IN ('write', 'delete', 'restore')),
    checksum   TEXT        NOT NULL,
    size       INTEGER     NOT NULL,
    content    TEXT,
    author_id  BIGINT      REFERENCES users (id) ON DELETE SET NULL,
    client_id  TEXT        NOT NULL DEFAULT '',
    created_at TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX entry_versions_key ON entry_versions (space_id, key, version);

CREATE TABLE audit_events (
    id         BIGSERIAL   PRIMARY KEY,
    org_id     BIGINT      NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    actor_id   BIGINT      REFERENCES users (id) ON DELETE SET NULL,
    action     TEXT        NOT NULL,
    repo       TEXT        NOT NULL DEFAULT '',
    target     TEXT        NOT NULL DEFAULT '',
    details    TEXT        NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX audit_events_org ON audit_events (org_id, id);
