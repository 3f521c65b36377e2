-- Sessions teammem knows (issue 24). A session is derived from the provenance every version
-- already records (entry_versions.session_id), so the write path stores nothing more; this
-- partial index lets the session queries find a session's versions without reading the rest.
CREATE INDEX entry_versions_session ON entry_versions (org_id, session_id) WHERE session_id <> '';

-- Session-memory notes a client uploads at a session's end (opt-in): one row per session and
-- space (a repo's team space), replaced by a later upload. session_id is the Claude Code
-- session id (a canonical UUID). The content was secret-scanned before it was stored. Times
-- are microseconds.
CREATE TABLE session_notes (
    id          INTEGER PRIMARY KEY,
    org_id      INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    session_id  TEXT    NOT NULL,
    space_id    INTEGER NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    uploader_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
    key_id      TEXT    NOT NULL DEFAULT '',
    content     TEXT    NOT NULL,
    size        INTEGER NOT NULL,
    checksum    TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE UNIQUE INDEX session_notes_session ON session_notes (org_id, session_id, space_id);
