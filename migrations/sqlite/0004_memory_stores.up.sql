-- Memory stores (design §4.5). Every space is a store; every entry a memory with an id that
-- survives edits and renames; every entry_versions row a version. Only columns and tables are
-- added: no table is rebuilt, so no foreign key can cascade over existing rows.

-- A memory's id: random, kept by edits, carried by a rename, new when a deleted path is
-- written again. Tombstones keep the id they deleted.
ALTER TABLE entries ADD COLUMN memory_id TEXT NOT NULL DEFAULT '';
UPDATE entries SET memory_id = 'mem_' || lower(hex(randomblob(16)));
CREATE INDEX entries_memory ON entries (space_id, memory_id);

-- Provenance of each version: the memory it belongs to, the API key that wrote it, the
-- dialect ("claude_code", "v1", "memory_stores", ...) and the Claude Code session id when
-- the client sent one. Rows older than this migration get their entry's current memory id
-- and empty provenance.
ALTER TABLE entry_versions ADD COLUMN memory_id TEXT NOT NULL DEFAULT '';
ALTER TABLE entry_versions ADD COLUMN api_key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE entry_versions ADD COLUMN api TEXT NOT NULL DEFAULT '';
ALTER TABLE entry_versions ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
UPDATE entry_versions SET memory_id = coalesce((SELECT e.memory_id FROM entries e
    WHERE e.space_id = entry_versions.space_id AND e.key = entry_versions.key), '');
CREATE INDEX entry_versions_memory ON entry_versions (space_id, memory_id, id);

-- A store created through the memory stores API has no repository: it lives in a repo row
-- flagged store = 1, whose slug ("@memstore/<uid>") is not a valid repo slug, so neither the
-- Claude Code endpoint nor /v1/repos can name it, and repo listings leave it out.
ALTER TABLE repos ADD COLUMN store INTEGER NOT NULL DEFAULT 0;

-- The store's own fields, for stores created through the API (a repo's spaces take their
-- name from the repo). metadata is a JSON object of strings. Timestamps are microseconds.
CREATE TABLE memory_stores (
    space_id    INTEGER PRIMARY KEY REFERENCES spaces (id) ON DELETE CASCADE,
    org_id      INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    metadata    TEXT    NOT NULL DEFAULT '{}',
    archived_at INTEGER,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX memory_stores_org ON memory_stores (org_id, space_id);
