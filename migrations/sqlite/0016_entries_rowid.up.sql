-- entries becomes a rowid table (issue 26 point 5). As a WITHOUT ROWID table, its rows
-- lived in an index b-tree, whose cells keep at most about 1 KB of a row on a 4 KB page:
-- the rest of every larger entry went to an overflow page of its own, mostly empty (26.8 MB
-- of pages for 10.1 MB of rows on the bench's scale database). A table b-tree keeps a row
-- of up to about 4 KB in its leaf, and one larger fills its overflow pages. The primary key
-- (space_id, key) stays, as the unique index every lookup and upsert goes through, and
-- entries_heads covers a space's heads, so reading them never reads content. Columns,
-- indexes and the search triggers are as before; the rows are copied unchanged.
CREATE TABLE entries_new (
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
);
INSERT INTO entries_new (org_id, space_id, key, content, checksum, size, version, deleted, author_id, client_id, updated_at,
    memory_id, overlap, memory_created_at)
SELECT org_id, space_id, key, content, checksum, size, version, deleted, author_id, client_id, updated_at,
    memory_id, overlap, memory_created_at FROM entries ORDER BY space_id, key;
DROP TABLE entries;
ALTER TABLE entries_new RENAME TO entries;
CREATE INDEX entries_version ON entries (space_id, version);
CREATE INDEX entries_tombstones ON entries (deleted, updated_at) WHERE deleted = 1;
CREATE INDEX entries_memory ON entries (space_id, memory_id);
CREATE INDEX entries_heads ON entries (space_id, org_id, key, checksum, size, version, deleted, author_id, client_id, updated_at,
    memory_id, memory_created_at);

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
