DROP INDEX dreams_review_proposal;
ALTER TABLE dreams DROP COLUMN review_proposal_id;
