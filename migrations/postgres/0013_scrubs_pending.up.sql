-- Scrubs an erasure still owes (issue 24 point 4): one row per table whose files may still
-- hold erased bytes, with the id (xid8, as a bigint) of the latest erasure's transaction,
-- which inserts or raises it in its own transaction. A rewrite of the table that began
-- once no snapshot older than xid was left deletes the row, unless a later erasure raised
-- it meanwhile. So a scrub put off past a restart still runs after it.
CREATE TABLE scrubs_pending (
    table_name TEXT   PRIMARY KEY,
    xid        BIGINT NOT NULL
);
