package teammem

import (
	"context"
	"errors"
	"strconv"
)

// planFunc is a write's plan against a space head and its entry heads.
type planFunc func(s Space, heads map[string]Entry, current func(string) (string, error)) ([]EntryChange, WriteResult, error)

// poisonChecker returns the poisoning checks of a call: they run on team
// writes only (personal memory is loaded by its owner alone), on the
// request's own content, once per upsert, before the lock (scanner).
func (w *Writer) poisonChecker(call WriteCall) PoisonChecker {
	if w.Poison == nil || call.Scope != ScopeTeam {
		return nil
	}
	return w.Poison
}

// rejectsPoison reports whether findings refuse the call's write: under
// poisoning: reject, for every team write but a restore (an admin's
// moderation of a version the space held before) and an approval (an
// admin read the findings already).
func rejectsPoison(call WriteCall, l Limits) bool {
	return call.Scope == ScopeTeam && l.Poisoning == PoisoningReject && !call.Request.Restore && call.Approve == nil
}

// WriteHeld reports whether the Writer would hold call for review rather
// than apply it (team_writes: review, or poisoning: review when the checks
// find something), by the org limits l: a dream worker that must submit
// its run as one proposal asks before it writes.
func WriteHeld(call WriteCall, l Limits) bool { return holdReason(call, l) != "" }

// holdReason says why the call may have to wait for review, "" when it
// applies directly: admins' writes, moderation, restores, approvals,
// dreams' output stores and personal writes always do.
func holdReason(call WriteCall, l Limits) string {
	p := call.Principal
	if call.Scope != ScopeTeam || call.Approve != nil || call.Moderate || call.Request.Restore || call.DreamOutput || p.User.Role.AtLeast(RoleAdmin) {
		return ""
	}
	if p.Org.Settings.TeamWritesFor(call.Repo) == TeamWritesReview {
		return HeldTeamWrites
	}
	if l.Poisoning == PoisoningReview {
		return HeldPoisoning
	}
	return ""
}

// propose plans the call against the space as it is (no lock: nothing is
// written to it) and, when the plan changes something that must wait,
// stores it as a proposal. held reports whether the write ends here: it
// was held, it changed nothing, or it was refused (err); false means it
// applies directly after all (poisoning: review found nothing).
func (w *Writer) propose(ctx context.Context, call WriteCall, target Target, reason string, sc *scanner, plan planFunc) (res WriteResult, held bool, err error) {
	p, space := call.Principal, target.Space
	if space.ID == 0 {
		space.Checksum = EmptySpaceChecksum // what a client may chain on
	}
	heads := map[string]Entry{}
	current := func(string) (string, error) { return "", nil }
	if space.ID != 0 {
		if heads, err = w.Store.EntryHeads(ctx, p.Org.ID, space.ID); err != nil {
			return res, true, err
		}
		current = func(key string) (string, error) {
			e, err := w.Store.EntryGet(ctx, p.Org.ID, space.ID, key)
			return e.Content, err
		}
	}
	var changes []EntryChange
	for round := 0; ; round++ {
		changes, res, err = plan(space, heads, current)
		if errors.Is(err, errRescan) && round == 0 {
			if err := sc.rescan(ctx); err != nil {
				return WriteResult{}, true, err
			}
			continue
		}
		break
	}
	res.Space, res.Repo = space, target.Repo
	switch {
	case errors.Is(err, errRescan):
		return WriteResult{}, true, Errorf(EUnavailable, "the space keeps changing under this write; try again")
	case err != nil || len(changes) == 0:
		return res, true, err
	case reason == HeldPoisoning && len(res.Findings) == 0:
		return WriteResult{}, false, nil
	}
	prop := Proposal{Repo: call.Repo, Scope: call.Scope, AuthorID: p.User.ID, Author: p.User.Handle, ClientID: call.ClientID,
		API: call.API, KeyID: p.Key.ID, SessionID: call.SessionID, Reason: reason, Findings: nonNilFindings(res.Findings)}
	for _, c := range changes {
		base := ""
		if h, ok := heads[c.Key]; ok && !h.Deleted {
			base = h.Checksum
		}
		prop.Changes = append(prop.Changes, ProposedChange{Key: c.Key, Op: c.Op, Content: c.Content, Base: base, Recreates: c.Recreates})
	}
	stored, err := w.storeProposal(ctx, call, prop)
	if err != nil {
		return WriteResult{}, true, err
	}
	res.Proposal, res.Written, res.Deleted = &stored, nil, nil
	return res, true, nil
}

// storeProposal stores prop, or returns the author's pending proposal that
// proposes exactly the same (a client sending a held write again, as the
// stock Claude Code client does after each pull, makes no second one).
func (w *Writer) storeProposal(ctx context.Context, call WriteCall, prop Proposal) (Proposal, error) {
	orgID := call.Principal.Org.ID
	pending, err := w.Store.ProposalList(ctx, orgID, ProposalFilter{Status: ProposalPending, AuthorID: prop.AuthorID, Repo: prop.Repo, Limit: 20})
	if err != nil {
		return Proposal{}, err
	}
	for _, old := range pending {
		if old.Scope != prop.Scope || len(old.Changes) != len(prop.Changes) {
			continue
		}
		if full, err := w.Store.ProposalGet(ctx, orgID, old.ID); err == nil && sameChanges(full.Changes, prop.Changes) {
			return full, nil
		}
	}
	stored, err := w.Store.ProposalCreate(ctx, orgID, prop)
	if err != nil {
		return Proposal{}, err
	}
	// A proposal is no change of the space: its audit row is its own.
	err = w.Store.AuditAppend(context.WithoutCancel(ctx), orgID, AuditEvent{ActorID: prop.AuthorID, Action: "proposal.create",
		Repo: prop.Repo, Target: strconv.FormatInt(stored.ID, 10), CreatedAt: stored.CreatedAt,
		Details: map[string]any{"api": call.API, "reason": prop.Reason, "entries": len(prop.Changes), "rule_ids": PoisonRuleIDs(prop.Findings)}})
	return stored, err
}

func nonNilFindings(f []PoisonFinding) []PoisonFinding {
	if f == nil {
		return []PoisonFinding{}
	}
	return f
}
