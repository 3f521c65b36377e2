DROP TRIGGER spaces_uid_default;
DROP INDEX spaces_uid;
ALTER TABLE spaces DROP COLUMN uid;
