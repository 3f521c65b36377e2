-- Memory stores (design §4.5). Every space is a store; every entry a memory with an id that
-- survives edits and renames; every entry_versions row a version. Only columns and tables are
-- added, as in SQLite.

-- A memory's id: random, kept by edits, carried by a rename, new when a deleted path is
-- written again. Tombstones keep the id they deleted. The volatile default gives every
-- existing row its own id; writes always set it.
ALTER TABLE entries ADD COLUMN memory_id TEXT NOT NULL DEFAULT ('mem_' || replace(gen_random_uuid()::text, '-', ''));
CREATE INDEX entries_memory ON entries (space_id, memory_id);

-- Provenance of each version: the memory it belongs to, the API key that wrote it, the
-- dialect and the Claude Code session id when the client sent one.
ALTER TABLE entry_versions ADD COLUMN memory_id TEXT NOT NULL DEFAULT '',
    ADD COLUMN api_key_id TEXT NOT NULL DEFAULT '',
    ADD COLUMN api TEXT NOT NULL DEFAULT '',
    ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
UPDATE entry_versions v SET memory_id = e.memory_id FROM entries e WHERE e.space_id = v.space_id AND e.key = v.key;
CREATE INDEX entry_versions_memory ON entry_versions (space_id, memory_id, id);

-- A store created through the memory stores API lives in a repo row flagged store, whose
-- slug ("@memstore/<uid>") is not a valid repo slug (see the SQLite migration).
ALTER TABLE repos ADD COLUMN store BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE memory_stores (
    space_id    BIGINT PRIMARY KEY REFERENCES spaces (id) ON DELETE CASCADE,
    org_id      BIGINT NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    name        TEXT   NOT NULL,
    description TEXT   NOT NULL DEFAULT '',
    metadata    JSONB  NOT NULL DEFAULT '{}',
    archived_at TIMESTAMPTZ,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX memory_stores_org ON memory_stores (org_id, space_id);
