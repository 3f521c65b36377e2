DROP TABLE memory_stores;
DELETE FROM repos WHERE store;
ALTER TABLE repos DROP COLUMN store;
DROP INDEX entry_versions_memory;
ALTER TABLE entry_versions DROP COLUMN session_id, DROP COLUMN api, DROP COLUMN api_key_id, DROP COLUMN memory_id;
DROP INDEX entries_memory;
ALTER TABLE entries DROP COLUMN memory_id;
