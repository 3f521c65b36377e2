ALTER TABLE entries DROP COLUMN memory_created_at;
