package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// Proposals (review before sharing): team writes held for an admin. An
// admin sees every proposal of the org; anyone else only their own, and a
// proposal of someone else is "not found" to them.

// maxProposalNote bounds a decision's note, in bytes.
const maxProposalNote = 2000

// listProposals serves GET /v1/proposals?status=&repo=&before=&limit=.
func (s *Server) listProposals(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamRead, false); err != nil {
		return err
	}
	af, err := auditFilter(r) // the same repo, before and limit parameters
	if err != nil {
		return err
	}
	f := teammem.ProposalFilter{Repo: af.Repo, BeforeID: af.BeforeID, Limit: af.Limit,
		Status: teammem.ProposalStatus(r.URL.Query().Get("status"))}
	if f.Status != "" && !f.Status.Valid() {
		return teammem.Errorf(teammem.EInvalid, `status must be "pending", "approved", "rejected" or absent`)
	}
	if teammem.Authorize(p, teammem.ActTeamReview, false) != nil {
		f.AuthorID = p.User.ID
	}
	list, err := s.store.ProposalList(r.Context(), p.Org.ID, f)
	if err != nil {
		return err
	}
	for i := range list {
		list[i].Findings = nonNil(list[i].Findings)
	}
	writeJSON(w, http.StatusOK, wire.ProposalList{Proposals: nonNil(list)})
	return nil
}

// proposalOf returns the proposal the path names, if the caller may see it.
func (s *Server) proposalOf(r *http.Request) (teammem.Proposal, error) {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamRead, false); err != nil {
		return teammem.Proposal{}, err
	}
	id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
	if err != nil || id < 1 {
		return teammem.Proposal{}, teammem.Errorf(teammem.ENotFound, "no such proposal")
	}
	prop, err := s.store.ProposalGet(r.Context(), p.Org.ID, id)
	if err != nil {
		return prop, err
	}
	if prop.AuthorID != p.User.ID && teammem.Authorize(p, teammem.ActTeamReview, false) != nil {
		return teammem.Proposal{}, teammem.Errorf(teammem.ENotFound, "proposal %d not found", id)
	}
	prop.Findings = nonNil(prop.Findings)
	return prop, nil
}

// getProposal serves GET /v1/proposals/{id}: the proposal with its content.
func (s *Server) getProposal(w http.ResponseWriter, r *http.Request) error {
	prop, err := s.proposalOf(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, prop)
	return nil
}

// decodeDecision reads an optional {"note": "..."} body.
func decodeDecision(r *http.Request) (wire.ProposalDecision, error) {
	var d wire.ProposalDecision
	if r.ContentLength != 0 {
		if err := decodeJSON(r, &d); err != nil {
			return d, err
		}
	}
	if len(d.Note) > maxProposalNote || strings.ContainsAny(d.Note, "\x00") {
		return d, teammem.Errorf(teammem.EInvalid, "note must be at most %d bytes of text", maxProposalNote)
	}
	return d, nil
}

// decisionOf reads an admin's decision on a proposal: the caller, who must
// be allowed to review, the decision's body and the proposal it names.
func (s *Server) decisionOf(r *http.Request) (teammem.Principal, wire.ProposalDecision, teammem.Proposal, error) {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamReview, true); err != nil {
		return p, wire.ProposalDecision{}, teammem.Proposal{}, err
	}
	d, err := decodeDecision(r)
	if err != nil {
		return p, d, teammem.Proposal{}, err
	}
	prop, err := s.proposalOf(r)
	return p, d, prop, err
}

// approveProposal serves POST /v1/proposals/{id}/approve: the proposal is
// applied through the write path with its bases (409 with the conflicts
// when an entry changed since it was proposed; the proposal stays pending
// and can be rejected), as its author's versions.
func (s *Server) approveProposal(w http.ResponseWriter, r *http.Request) error {
	p, d, prop, err := s.decisionOf(r)
	if err != nil {
		return err
	}
	if prop.Status != teammem.ProposalPending {
		return teammem.Errorf(teammem.EConflict, "proposal %d was %s already", prop.ID, prop.Status)
	}
	if _, _, ok := prop.StoreChange(); ok {
		return s.approveStoreChange(w, r, p, d, prop)
	}
	id := strconv.FormatInt(prop.ID, 10)
	call := writeCall(r, p, apiV1, prop.Repo, prop.Scope, prop.Request())
	call.Approve = &prop
	if uid, ok := teammem.StoreRepoUID(prop.Repo); ok {
		// A write held in an API store: no slug reaches its hidden repo,
		// so the store is named by its id, as its own routes do.
		m, err := s.store.MemoryStoreGet(r.Context(), p.Org.ID, uid)
		if err != nil {
			return err
		}
		if m.Archived() {
			return teammem.StoreArchived()
		}
		call.Store = &m
	}
	call.Audit = []teammem.AuditEvent{{Action: "proposal.approve", Target: id,
		Details: map[string]any{"author": prop.Author, "entries": len(prop.Changes)}}}
	res, err := s.write(r.Context(), call)
	if err != nil {
		return err
	}
	decided, err := s.store.ProposalDecide(r.Context(), p.Org.ID, prop.ID,
		teammem.ProposalDecideParams{Status: teammem.ProposalApproved, By: p.User.ID, At: s.now(), Note: d.Note})
	if err != nil {
		return err
	}
	s.proposalDecided(r.Context(), p, decided)
	if res.Noop() {
		s.audit(r.Context(), p, "proposal.approve", prop.Repo, id, map[string]any{"author": prop.Author, "written": 0})
	}
	s.metrics.Proposals.WithLabelValues(p.Org.Slug, "approved").Inc()
	decided.Findings = nonNil(decided.Findings)
	writeJSON(w, http.StatusOK, wire.ProposalApproved{Proposal: decided, Write: writeResultOf(res)})
	return nil
}

// rejectProposal serves POST /v1/proposals/{id}/reject: the proposal is
// kept, decided, and the rejection is audited.
func (s *Server) rejectProposal(w http.ResponseWriter, r *http.Request) error {
	p, d, prop, err := s.decisionOf(r)
	if err != nil {
		return err
	}
	decided, err := s.store.ProposalDecide(r.Context(), p.Org.ID, prop.ID,
		teammem.ProposalDecideParams{Status: teammem.ProposalRejected, By: p.User.ID, At: s.now(), Note: d.Note})
	if err != nil {
		return err
	}
	s.proposalDecided(r.Context(), p, decided)
	s.audit(r.Context(), p, "proposal.reject", prop.Repo, strconv.FormatInt(prop.ID, 10),
		map[string]any{"author": prop.Author, "entries": len(prop.Changes), "rule_ids": teammem.PoisonRuleIDs(prop.Findings)})
	s.metrics.Proposals.WithLabelValues(p.Org.Slug, "rejected").Inc()
	decided.Findings = nonNil(decided.Findings)
	writeJSON(w, http.StatusOK, decided)
	return nil
}
