-- Sessions teammem knows (issue 24): see the SQLite migration. The partial index finds a
-- session's versions; the write path records nothing more than it did.
CREATE INDEX entry_versions_session ON entry_versions (org_id, session_id) WHERE session_id <> '';

-- Session-memory notes uploaded at a session's end (opt-in), one row per session and space.
CREATE TABLE session_notes (
    id          BIGSERIAL   PRIMARY KEY,
    org_id      BIGINT      NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    session_id  TEXT        NOT NULL,
    space_id    BIGINT      NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    uploader_id BIGINT      REFERENCES users (id) ON DELETE SET NULL,
    key_id      TEXT        NOT NULL DEFAULT '',
    content     TEXT        NOT NULL,
    size        INTEGER     NOT NULL,
    checksum    TEXT        NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE UNIQUE INDEX session_notes_session ON session_notes (org_id, session_id, space_id);
