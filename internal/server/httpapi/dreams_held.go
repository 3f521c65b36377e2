package httpapi

import (
	"context"
	"net/http"

	"github.com/teammem/teammem/internal/teammem"
)

// A create_new dream's Apply held for review (team_writes: review) is
// linked to its proposal (Dream.Review.ProposalID): approving the proposal
// marks the dream applied, rejecting it returns the dream's review to
// pending without a proposal, and while it is pending another Apply is
// refused with 409 naming it. The proposal's decision updates the dream
// after the fact, so an Apply also settles a link whose decision it finds
// already made.

// settleHeldApply readies d's Apply when an earlier one was held: 409
// while that proposal is pending; d applied (done) when it was approved;
// d unlinked, to apply again, when it was rejected or is gone.
func (s *Server) settleHeldApply(r *http.Request, d teammem.Dream) (teammem.Dream, bool, error) {
	id := d.Review.ProposalID
	if id == 0 {
		return d, false, nil
	}
	prop, err := s.store.ProposalGet(r.Context(), d.OrgID, id)
	switch {
	case teammem.ErrorCode(err) == teammem.ENotFound:
	case err != nil:
		return d, false, err
	case prop.Status == teammem.ProposalPending:
		return d, false, teammem.DreamApplyHeld(d)
	case prop.Status == teammem.ProposalApproved:
		d, err = s.dreamReviewSet(r, d, teammem.ReviewApplied)
		return d, true, err
	}
	d, err = s.store.DreamReviewProposal(r.Context(), d.OrgID, d.ID, teammem.DreamProposalParams{From: id})
	return d, false, err
}

// linkHeldApply links d's review to the proposal its Apply was held as.
func (s *Server) linkHeldApply(ctx context.Context, d teammem.Dream, proposalID int64) (teammem.Dream, error) {
	return s.store.DreamReviewProposal(ctx, d.OrgID, d.ID, teammem.DreamProposalParams{To: proposalID})
}

// proposalDecided carries a proposal's decision to the dream whose held
// Apply it is, if any: approved, the dream is applied (by the approver);
// rejected, its review is pending again with no proposal. The decision
// stands whatever happens here; a failure is logged, and the dream's next
// Apply settles the link.
func (s *Server) proposalDecided(ctx context.Context, p teammem.Principal, prop teammem.Proposal) {
	ds, err := s.store.DreamList(ctx, p.Org.ID, teammem.DreamFilter{ProposalID: prop.ID, IncludeArchived: true, Limit: 1})
	if err != nil || len(ds) == 0 {
		if err != nil {
			s.log.ErrorContext(ctx, "find the dream of a proposal", "proposal", prop.ID, "error", err.Error())
		}
		return
	}
	d := ds[0]
	if prop.Status == teammem.ProposalApproved {
		_, err = s.store.DreamReviewSet(ctx, d.OrgID, d.ID, teammem.DreamReviewParams{From: teammem.ReviewPending,
			To: teammem.ReviewApplied, At: s.now().UTC(), By: p.User.ID})
		if err == nil {
			s.audit(ctx, p, "dream.applied", prop.Repo, d.ID, withDetail(dreamAuditDetails(d), "proposal_id", prop.ID))
		}
	} else {
		_, err = s.store.DreamReviewProposal(ctx, d.OrgID, d.ID, teammem.DreamProposalParams{From: prop.ID})
	}
	if err != nil && teammem.ErrorCode(err) != teammem.EConflict {
		s.log.ErrorContext(ctx, "carry a proposal's decision to its dream", "proposal", prop.ID, "dream", d.ID, "error", err.Error())
	}
}
