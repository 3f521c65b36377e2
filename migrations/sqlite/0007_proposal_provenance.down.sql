ALTER TABLE proposals DROP COLUMN session_id;
ALTER TABLE proposals DROP COLUMN key_id;
