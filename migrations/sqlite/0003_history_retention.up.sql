-- A redacted version keeps its row (version, op, author, time) so history stays readable,
-- but its content is NULL, its checksum '' and its size 0; redacted_at (microseconds) and
-- redacted_by say when and by whom. redacted_by has no foreign key: SQLite cannot drop a
-- column that has one, and users are never deleted (only disabled).
ALTER TABLE entry_versions ADD COLUMN redacted_at INTEGER;
ALTER TABLE entry_versions ADD COLUMN redacted_by INTEGER;

-- The retention sweep pages through an org's versions by age; id breaks ties, since many
-- versions share a timestamp (one commit writes several keys).
CREATE INDEX entry_versions_age ON entry_versions (org_id, created_at, id);
