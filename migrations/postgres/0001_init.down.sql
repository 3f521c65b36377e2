DROP TABLE audit_events;
DROP TABLE entry_versions;
DROP TABLE entries;
DROP TABLE spaces;
DROP TABLE repos;
DROP TABLE api_keys;
DROP TABLE users;
DROP TABLE orgs;
