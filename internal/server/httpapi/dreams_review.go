package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// Review of a create_new dream (teammem extensions of the Dreams API): the
// diff of its output against its input, Apply (the difference written into
// the input store through the one write path, with the input's state at
// the dream's start as preconditions) and Discard (its output store
// archived).

// dreamDiff serves GET /v1/dreams/{dream_id}/diff: the output against the
// input as it is now, unchanged memories left out.
func (s *Server) dreamDiff(w http.ResponseWriter, r *http.Request) error {
	_, d, err := s.resolveDream(r)
	if err != nil {
		return err
	}
	if d.OutputStoreUID == "" {
		return teammem.Errorf(teammem.EInvalid, "dream %s is %s and has no output store yet: there is nothing to compare", d.ID, d.Status)
	}
	changes, _, err := s.dreamChanges(r.Context(), d)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, dreamDiffOf(d, changes))
	return nil
}

// dreamChanges compares d's output store with its input as it is now, and
// returns the input's live memories too.
func (s *Server) dreamChanges(ctx context.Context, d teammem.Dream) ([]teammem.DreamChange, []teammem.Entry, error) {
	in, err := s.store.EntriesList(ctx, d.OrgID, d.InputSpaceID, true)
	if err != nil {
		return nil, nil, err
	}
	out, err := s.store.EntriesList(ctx, d.OrgID, d.OutputSpaceID, true)
	if err != nil {
		return nil, nil, err
	}
	return teammem.DiffDream(in, out), in, nil
}

// dreamDiffOf encodes a diff.
func dreamDiffOf(d teammem.Dream, changes []teammem.DreamChange) wire.DreamDiff {
	diff := wire.DreamDiff{DreamID: d.ID, InputStoreID: d.InputStoreID(), OutputStoreID: d.OutputStoreID(),
		Changes: make([]wire.DreamChange, 0, len(changes))}
	for _, c := range changes {
		wc := wire.DreamChange{Path: teammem.MemoryPath(c.Key), Change: string(c.Kind), MergedFrom: []string{}}
		if c.MemoryID != "" {
			wc.MemoryID = &c.MemoryID
		}
		if c.HadBefore {
			wc.Before = &c.Before
		}
		if c.HasAfter {
			wc.After = &c.After
		}
		for _, k := range c.MergedFrom {
			wc.MergedFrom = append(wc.MergedFrom, teammem.MemoryPath(k))
		}
		diff.Changes = append(diff.Changes, wc)
	}
	return diff
}

// reviewDream loads the dream of an apply or discard, with its input store
// resolved for writing (403 for a key that cannot write it), and reports
// whether its review is at to already.
func (s *Server) reviewDream(r *http.Request, to teammem.DreamReviewState) (*storeReq, teammem.Dream, bool, error) {
	_, d, err := s.resolveDream(r)
	if err != nil {
		return nil, d, false, err
	}
	sr, err := s.resolveStoreID(r, d.InputStoreID(), true)
	if err != nil {
		return nil, d, false, err
	}
	done, err := teammem.DreamReviewCheck(d, to)
	return sr, d, done, err
}

// applyDream serves POST /v1/dreams/{dream_id}/apply. A held write (the
// input is a team store under team_writes: review) answers 202 with the
// dream, whose review stays pending, linked to the proposal (in Location):
// an admin's approval of it applies the dream, a rejection unlinks it, and
// another Apply meanwhile is a 409 naming it (dreams_held.go).
func (s *Server) applyDream(w http.ResponseWriter, r *http.Request) error {
	sr, d, done, err := s.reviewDream(r, teammem.ReviewApplied)
	if err == nil && !done {
		d, done, err = s.settleHeldApply(r, d)
	}
	if err != nil || done {
		return s.answerDream(w, d, err)
	}
	changes, live, err := s.dreamChanges(r.Context(), d)
	if err != nil {
		return err
	}
	if stale := teammem.DreamStale(d.Base, live); len(stale) > 0 {
		return teammem.DreamStaleError(d, stale)
	}
	if sr.store.Archived() {
		return teammem.StoreArchived()
	}
	req := teammem.DreamApplyRequest(d.Base, changes)
	req.Explicit, req.RefuseSecrets = true, true
	details := dreamAuditDetails(d)
	call := writeCall(r, sr.p, apiDream, sr.store.Repo.Slug, sr.store.Space.Scope, req)
	call.Store = &sr.store
	call.Audit = []teammem.AuditEvent{{Action: "dream.applied", Target: d.ID, Details: details}}
	res, err := s.write(r.Context(), call)
	if err != nil {
		return s.applyRefused(r, d, err)
	}
	if res.Held() {
		s.audit(r.Context(), sr.p, "dream.apply_held", sr.store.Repo.Slug, d.ID, withDetail(details, "proposal_id", res.Proposal.ID))
		if d, err = s.linkHeldApply(r.Context(), d, res.Proposal.ID); err != nil {
			return err
		}
		w.Header().Set("Location", "/v1/proposals/"+strconv.FormatInt(res.Proposal.ID, 10))
		writeJSON(w, http.StatusAccepted, dreamOf(d))
		return nil
	}
	if res.Noop() { // nothing committed, so neither did the write's audit
		s.audit(r.Context(), sr.p, "dream.applied", sr.store.Repo.Slug, d.ID, withDetail(details, "written", 0))
	}
	d, err = s.dreamReviewSet(r, d, teammem.ReviewApplied)
	return s.answerDream(w, d, err)
}

// applyRefused explains a refused apply: a base that no longer held (the
// input changed between the check and the commit) is the same 409 as a
// stale input, naming the memories; an apply that raced another one and
// lost is answered as done; anything else is the write path's refusal.
func (s *Server) applyRefused(r *http.Request, d teammem.Dream, err error) error {
	var te *teammem.Error
	if !errors.As(err, &te) || te.Code != teammem.EConflict {
		return storeWriteError(err)
	}
	if now, gerr := s.store.DreamGet(r.Context(), d.OrgID, d.ID); gerr == nil && now.Review.State == teammem.ReviewApplied {
		return errDreamDone{now}
	}
	conflicts, _ := te.Details["conflicts"].([]teammem.Conflict)
	keys := make([]string, len(conflicts))
	for i, c := range conflicts {
		keys[i] = c.Key
	}
	return teammem.DreamStaleError(d, keys)
}

// errDreamDone carries a dream whose review another request completed.
type errDreamDone struct{ d teammem.Dream }

func (e errDreamDone) Error() string { return "dream " + e.d.ID + " was reviewed by another request" }

// answerDream writes d, unless err: an errDreamDone is answered as done.
func (s *Server) answerDream(w http.ResponseWriter, d teammem.Dream, err error) error {
	var done errDreamDone
	if errors.As(err, &done) {
		d, err = done.d, nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, dreamOf(d))
	return nil
}

// dreamReviewSet moves d's review from pending to to; a move another
// request made first is answered as done.
func (s *Server) dreamReviewSet(r *http.Request, d teammem.Dream, to teammem.DreamReviewState) (teammem.Dream, error) {
	p := principal(r)
	nd, err := s.store.DreamReviewSet(r.Context(), d.OrgID, d.ID, teammem.DreamReviewParams{From: teammem.ReviewPending, To: to,
		At: s.now().UTC(), By: p.User.ID})
	if teammem.ErrorCode(err) == teammem.EConflict && nd.Review.State == to {
		return nd, nil
	}
	return nd, err
}

// discardDream serves POST /v1/dreams/{dream_id}/discard: the output store
// is archived (read-only for good; its memories stay readable) and the
// review becomes discarded.
func (s *Server) discardDream(w http.ResponseWriter, r *http.Request) error {
	sr, d, done, err := s.reviewDream(r, teammem.ReviewDiscarded)
	if err != nil || done {
		return s.answerDream(w, d, err)
	}
	out, err := s.store.MemoryStoreGet(r.Context(), d.OrgID, d.OutputStoreUID)
	switch {
	case teammem.ErrorCode(err) == teammem.ENotFound:
		// Deleted already: nothing left to archive.
	case err != nil:
		return err
	case !out.Archived():
		at := s.now().UTC()
		if _, err := s.store.MemoryStoreUpdate(r.Context(), d.OrgID, out.Space.ID, teammem.MemoryStoreUpdateParams{ArchivedAt: &at}); err != nil {
			return err
		}
		s.storeChanged(r.Context(), out)
	}
	was := d.Review.State
	if d, err = s.dreamReviewSet(r, d, teammem.ReviewDiscarded); err == nil && was != teammem.ReviewDiscarded {
		s.audit(r.Context(), sr.p, "dream.discarded", sr.store.Repo.Slug, d.ID, dreamAuditDetails(d))
	}
	return s.answerDream(w, d, err)
}

// dreamAuditDetails is the provenance of a dream's review events.
func dreamAuditDetails(d teammem.Dream) map[string]any {
	return map[string]any{"api": apiDream, "dream": d.ID, "input": d.InputStoreID(), "output": d.OutputStoreID(),
		"model": d.Model, "created_by_key": d.CreatorKeyID}
}

// withDetail returns a copy of details with k set to v.
func withDetail(details map[string]any, k string, v any) map[string]any {
	c := make(map[string]any, len(details)+1)
	for key, val := range details {
		c[key] = val
	}
	c[k] = v
	return c
}
