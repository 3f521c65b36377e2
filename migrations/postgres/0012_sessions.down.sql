DROP TABLE session_notes;
DROP INDEX entry_versions_session;
