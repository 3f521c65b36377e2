-- A create_new dream whose Apply was held for review (team_writes: review) waits on that
-- proposal: its id links the dream to it, so that approving it marks the dream applied,
-- rejecting it returns the dream to pending, and a second Apply while it is held is refused.
-- 0: no held Apply.
ALTER TABLE dreams ADD COLUMN review_proposal_id INTEGER NOT NULL DEFAULT 0;
-- The proposal decisions find their dream.
CREATE INDEX dreams_review_proposal ON dreams (org_id, review_proposal_id) WHERE review_proposal_id <> 0;
