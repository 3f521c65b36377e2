-- A space's uid names one incarnation of the space: it is random, never reused, and a
-- client that sees a different uid (a new server at the same URL, a re-created database,
-- another org) knows the space is not the one it last synced. A restored backup keeps its
-- uids; clients detect that from the head going back instead.
ALTER TABLE spaces ADD COLUMN uid TEXT NOT NULL DEFAULT '';
UPDATE spaces SET uid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX spaces_uid ON spaces (uid);

-- SQLite cannot default a column to a random value, so every insert that leaves uid
-- out gets one here.
CREATE TRIGGER spaces_uid_default AFTER INSERT ON spaces WHEN new.uid = ''
BEGIN
    UPDATE spaces SET uid = lower(hex(randomblob(16))) WHERE id = new.id;
END;
