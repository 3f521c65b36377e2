-- Scrubs an erasure still owes (issue 24 point 4): the erasure records one in its own
-- transaction, so a scrub that did not finish before a restart still runs after it (the
-- jobs queue's scrub job works this table). SQLite has one row, table_name 'wal' (the file
-- and its write-ahead log), whose xid counts the erasures asked for: a scrub that read the
-- count before it began deletes the row when it finishes, unless a later erasure raised it.
CREATE TABLE scrubs_pending (
    table_name TEXT    PRIMARY KEY,
    xid        INTEGER NOT NULL
);
