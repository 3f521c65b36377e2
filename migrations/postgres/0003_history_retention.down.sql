DROP INDEX entry_versions_age;
ALTER TABLE entry_versions DROP COLUMN redacted_by, DROP COLUMN redacted_at;
