-- A memory keeps its creation time across edits and renames (the memory stores API's
-- created_at): the time its memory id was first written. Existing memories take the oldest
-- version still recorded for their id, else their last change.
ALTER TABLE entries ADD COLUMN memory_created_at INTEGER NOT NULL DEFAULT 0;
UPDATE entries SET memory_created_at = coalesce((SELECT min(v.created_at) FROM entry_versions v
    WHERE v.space_id = entries.space_id AND v.memory_id = entries.memory_id AND v.memory_id <> ''), updated_at);
