-- Full-text search over live entries (issue 25 point 4), with SQLite's FTS5.
--
-- entries has no rowid, which FTS5 needs, so entry_search gives each live entry one. An id
-- is org_id << 32 plus a number within the org, taken anew at every write: a search reads
-- one org's range of rowids, which FTS5 answers by seeking, and the highest ids of a range
-- are its most recently written entries. entry_fts indexes the key and content of each
-- live entry (body) and keeps no copy of them (contentless, with deletes): the content
-- stays in entries alone. Its tags column holds words the search filters by, so that the
-- index alone answers which entries a caller may read: "s<space id>" and "team" or
-- "u<user id>" (the owner of a personal space). Entries of the memory stores made through
-- the API, which belong to no repository, are not indexed. Triggers keep both tables
-- current in the transaction of every write. The index still holds the words of deleted
-- rows until its segments merge: the scrub that follows every erasure merges them
-- ('optimize'), and secure_delete zeroes the pages they leave.
CREATE TABLE entry_search (
    id       INTEGER PRIMARY KEY,
    space_id INTEGER NOT NULL,
    key      TEXT    NOT NULL,
    UNIQUE (space_id, key)
);

CREATE VIRTUAL TABLE entry_fts USING fts5(body, tags, content = '', contentless_delete = 1, tokenize = 'unicode61');

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

-- The entries there already, oldest write first.
INSERT INTO entry_search (id, space_id, key)
SELECT (e.org_id << 32) + row_number() OVER (PARTITION BY e.org_id ORDER BY e.updated_at, e.space_id, e.key), e.space_id, e.key
FROM entries e JOIN spaces sp ON sp.id = e.space_id JOIN repos r ON r.id = sp.repo_id
WHERE e.deleted = 0 AND e.content IS NOT NULL AND r.store = 0;
INSERT INTO entry_fts (rowid, body, tags)
SELECT s.id, e.key || ' ' || e.content, 's' || sp.id || ' ' || CASE WHEN sp.scope = 'team' THEN 'team' ELSE 'u' || sp.user_id END
FROM entry_search s JOIN entries e ON e.space_id = s.space_id AND e.key = s.key JOIN spaces sp ON sp.id = s.space_id;
