-- Poisoning checks (issue 15 point 4): each version keeps the findings of the checks on its
-- content, a JSON array of {path, ruleId, label, line, excerpt}; '' when there were none.
ALTER TABLE entry_versions ADD COLUMN findings TEXT NOT NULL DEFAULT '';

-- Review before sharing (issue 15 point 3): a held team write. changes is a JSON array of
-- {key, op, content, base}; findings as above. Decided proposals stay, for the record.
CREATE TABLE proposals (
    id         INTEGER PRIMARY KEY,
    org_id     INTEGER NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    repo       TEXT    NOT NULL,
    scope      TEXT    NOT NULL CHECK (scope IN ('team', 'personal')),
    author_id  INTEGER REFERENCES users (id) ON DELETE SET NULL,
    client_id  TEXT    NOT NULL DEFAULT '',
    api        TEXT    NOT NULL DEFAULT '',
    status     TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'rejected')),
    reason     TEXT    NOT NULL DEFAULT '',
    changes    TEXT    NOT NULL,
    findings   TEXT    NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    decided_at INTEGER,
    decided_by INTEGER,
    note       TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX proposals_org ON proposals (org_id, status, id);
