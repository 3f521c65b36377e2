-- A memory keeps its creation time across edits and renames (the memory stores API's
-- created_at): the time its memory id was first written. Existing memories take the oldest
-- version still recorded for their id, else their last change.
ALTER TABLE entries ADD COLUMN memory_created_at TIMESTAMPTZ DEFAULT now();
UPDATE entries e SET memory_created_at = coalesce((SELECT min(v.created_at) FROM entry_versions v
    WHERE v.space_id = e.space_id AND v.memory_id = e.memory_id AND v.memory_id <> ''), e.updated_at);
ALTER TABLE entries ALTER COLUMN memory_created_at SET NOT NULL;
