-- A proposal remembers the API key and the Claude Code session of the write it holds, so the
-- versions an approval commits carry the same provenance as a direct write would have.
ALTER TABLE proposals ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE proposals ADD COLUMN session_id TEXT NOT NULL DEFAULT '';
