-- Full-text search over live entries (issue 25 point 4), with SQLite's FTS5.
--
-- entries has no rowid, which FTS5 needs, so entry_search gives each live entry one. An id
-- is org_id << 32 plus a number within the org: a search restricts the index to one org by
-- a rowid range, which FTS5 answers by seeking, instead of matching every org's entries.
-- entry_fts indexes the key and content of each live entry and keeps no copy of them
-- (contentless, with deletes): the content stays in entries alone. Triggers keep both
-- current in the transaction of every write. The index still holds the tokens of deleted
-- rows until its segments merge: the scrub that follows every erasure merges them
-- ('optimize'), and secure_delete zeroes the pages they leave.
CREATE TABLE entry_search (
    id       INTEGER PRIMARY KEY,
    space_id INTEGER NOT NULL,
    key      TEXT    NOT NULL,
    UNIQUE (space_id, key)
);

CREATE VIRTUAL TABLE entry_fts USING fts5(body, content = '', contentless_delete = 1, tokenize = 'unicode61');

CREATE TRIGGER entries_search_insert AFTER INSERT ON entries
WHEN NEW.deleted = 0 AND NEW.content IS NOT NULL
BEGIN
    INSERT INTO entry_search (id, space_id, key) VALUES (
        (SELECT coalesce(max(id), NEW.org_id << 32) + 1 FROM entry_search
         WHERE id > NEW.org_id << 32 AND id < (NEW.org_id + 1) << 32),
        NEW.space_id, NEW.key);
    INSERT INTO entry_fts (rowid, body)
    SELECT id, NEW.key || ' ' || NEW.content FROM entry_search WHERE space_id = NEW.space_id AND key = NEW.key;
END;

CREATE TRIGGER entries_search_update AFTER UPDATE OF content, deleted ON entries
BEGIN
    DELETE FROM entry_fts WHERE rowid = (SELECT id FROM entry_search WHERE space_id = OLD.space_id AND key = OLD.key);
    DELETE FROM entry_search WHERE space_id = OLD.space_id AND key = OLD.key
        AND (NEW.deleted <> 0 OR NEW.content IS NULL);
    INSERT INTO entry_search (id, space_id, key)
    SELECT (SELECT coalesce(max(id), NEW.org_id << 32) + 1 FROM entry_search
            WHERE id > NEW.org_id << 32 AND id < (NEW.org_id + 1) << 32), NEW.space_id, NEW.key
    WHERE NEW.deleted = 0 AND NEW.content IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM entry_search WHERE space_id = NEW.space_id AND key = NEW.key);
    INSERT INTO entry_fts (rowid, body)
    SELECT id, NEW.key || ' ' || NEW.content FROM entry_search
    WHERE space_id = NEW.space_id AND key = NEW.key AND NEW.deleted = 0 AND NEW.content IS NOT NULL;
END;

CREATE TRIGGER entries_search_delete AFTER DELETE ON entries
BEGIN
    DELETE FROM entry_fts WHERE rowid = (SELECT id FROM entry_search WHERE space_id = OLD.space_id AND key = OLD.key);
    DELETE FROM entry_search WHERE space_id = OLD.space_id AND key = OLD.key;
END;

-- The entries there already.
INSERT INTO entry_search (id, space_id, key)
SELECT (org_id << 32) + row_number() OVER (PARTITION BY org_id ORDER BY space_id, key), space_id, key
FROM entries WHERE deleted = 0 AND content IS NOT NULL;
INSERT INTO entry_fts (rowid, body)
SELECT s.id, e.key || ' ' || e.content FROM entry_search s JOIN entries e ON e.space_id = s.space_id AND e.key = s.key;
