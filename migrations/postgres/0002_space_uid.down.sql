DROP INDEX spaces_uid;
ALTER TABLE spaces DROP COLUMN uid;
