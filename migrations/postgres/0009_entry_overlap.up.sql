-- An entry whose current content is a merge that kept both sides of an overlapping edit, as
-- the client that merged said (issue 21 point 2): the change feed carries it, so every machine
-- that pulls the merge names the file for review, not only the one that merged.
ALTER TABLE entries ADD COLUMN overlap BOOLEAN NOT NULL DEFAULT false;
