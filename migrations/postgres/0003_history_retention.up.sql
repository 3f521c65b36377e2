-- A redacted version keeps its row (version, op, author, time) so history stays readable,
-- but its content is NULL, its checksum '' and its size 0; redacted_at and redacted_by say
-- when and by whom. redacted_by has no foreign key, as in SQLite (which could not drop the
-- column otherwise): users are never deleted, only disabled.
ALTER TABLE entry_versions ADD COLUMN redacted_at TIMESTAMPTZ, ADD COLUMN redacted_by BIGINT;

-- The retention sweep pages through an org's versions by age; id breaks ties, since many
-- versions share a timestamp (one commit writes several keys).
CREATE INDEX entry_versions_age ON entry_versions (org_id, created_at, id);
