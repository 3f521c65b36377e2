-- A space's uid names one incarnation of the space: it is random, never reused, and a
-- client that sees a different uid (a new server at the same URL, a re-created database,
-- another org) knows the space is not the one it last synced. A restored backup keeps its
-- uids; clients detect that from the head going back instead.
ALTER TABLE spaces ADD COLUMN uid TEXT NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', '');
CREATE UNIQUE INDEX spaces_uid ON spaces (uid);
