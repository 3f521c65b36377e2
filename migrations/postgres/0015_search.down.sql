DROP INDEX entries_search;
ALTER TABLE entries DROP COLUMN search;
