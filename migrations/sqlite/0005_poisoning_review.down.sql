DROP INDEX proposals_org;
DROP TABLE proposals;
ALTER TABLE entry_versions DROP COLUMN findings;
