-- Back to the WITHOUT ROWID table of migrations 0001-0015.
CREATE TABLE entries_old (
    org_id            INTEGER NOT NULL,
    space_id          INTEGER NOT NULL REFERENCES spaces (id) ON DELETE CASCADE,
    key               TEXT    NOT NULL,
    content           TEXT,
    checksum          TEXT    NOT NULL,
    size              INTEGER NOT NULL,
    version           INTEGER NOT NULL,
    deleted           INTEGER NOT NULL DEFAULT 0,
    author_id         INTEGER REFERENCES users (id) ON DELETE SET NULL,
    client_id         TEXT    NOT NULL DEFAULT '',
    updated_at        INTEGER NOT NULL,
    memory_id         TEXT    NOT NULL DEFAULT '',
    overlap           INTEGER NOT NULL DEFAULT 0,
    memory_created_at INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (space_id, key)
) WITHOUT ROWID;
INSERT INTO entries_old SELECT org_id, space_id, key, content, checksum, size, version, deleted, author_id, client_id, updated_at,
    memory_id, overlap, memory_created_at FROM entries;
DROP TABLE entries;
ALTER TABLE entries_old RENAME TO entries;
CREATE INDEX entries_version ON entries (space_id, version);
CREATE INDEX entries_tombstones ON entries (deleted, updated_at) WHERE deleted = 1;
CREATE INDEX entries_memory ON entries (space_id, memory_id);

CREATE TRIGGER entries_search_insert AFTER INSERT ON entries
WHEN NEW.deleted = 0 AND NEW.content IS NOT NULL
BEGIN
    INSERT INTO entry_search (id, space_id, key)
    SELECT (SELECT coalesce(max(id), NEW.org_id << 32) + 1 FROM entry_search
            WHERE id > NEW.org_id << 32 AND id < (NEW.org_id + 1) << 32), NEW.space_id, NEW.key
    FROM spaces sp JOIN repos r ON r.id = sp.repo_id WHERE sp.id = NEW.space_id AND r.store = 0;
    INSERT INTO entry_fts (rowid, body, tags)
    SELECT s.id, NEW.key || ' ' || NEW.content,
        's' || sp.id || ' ' || CASE WHEN sp.scope = 'team' THEN 'team' ELSE 'u' || sp.user_id END
    FROM entry_search s JOIN spaces sp ON sp.id = s.space_id WHERE s.space_id = NEW.space_id AND s.key = NEW.key;
END;

CREATE TRIGGER entries_search_update AFTER UPDATE OF content, deleted ON entries
BEGIN
    DELETE FROM entry_fts WHERE rowid = (SELECT id FROM entry_search WHERE space_id = OLD.space_id AND key = OLD.key);
    DELETE FROM entry_search WHERE space_id = OLD.space_id AND key = OLD.key;
    INSERT INTO entry_search (id, space_id, key)
    SELECT (SELECT coalesce(max(id), NEW.org_id << 32) + 1 FROM entry_search
            WHERE id > NEW.org_id << 32 AND id < (NEW.org_id + 1) << 32), NEW.space_id, NEW.key
    FROM spaces sp JOIN repos r ON r.id = sp.repo_id
    WHERE sp.id = NEW.space_id AND r.store = 0 AND NEW.deleted = 0 AND NEW.content IS NOT NULL;
    INSERT INTO entry_fts (rowid, body, tags)
    SELECT s.id, NEW.key || ' ' || NEW.content,
        's' || sp.id || ' ' || CASE WHEN sp.scope = 'team' THEN 'team' ELSE 'u' || sp.user_id END
    FROM entry_search s JOIN spaces sp ON sp.id = s.space_id WHERE s.space_id = NEW.space_id AND s.key = NEW.key;
END;

CREATE TRIGGER entries_search_delete AFTER DELETE ON entries
BEGIN
    DELETE FROM entry_fts WHERE rowid = (SELECT id FROM entry_search WHERE space_id = OLD.space_id AND key = OLD.key);
    DELETE FROM entry_search WHERE space_id = OLD.space_id AND key = OLD.key;
END;
