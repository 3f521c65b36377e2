package httpapi

import (
	"net/http"
	"strconv"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// A store's own fields under the org's review and poisoning policies
// (teammem.ReviewStoreFields): the create and update handlers ask before
// they change anything, and an admin's approval of a held change applies
// it here.

// reviewStoreFields runs the policies on a store change by the request's
// caller: nil when it applies now (findings, if any, counted as flagged
// and audited by the caller's write), else the refusal the memory stores
// answer: a held change's (400 content rejected by safety check, the
// proposal in the details) or poisoning: reject's.
func (s *Server) reviewStoreFields(r *http.Request, p teammem.Principal, slug string, op teammem.Op, up teammem.MemoryStoreUpdateParams, base string) ([]teammem.PoisonFinding, error) {
	fields := teammem.StoreFields{Name: up.Name, Description: up.Description, Metadata: up.Metadata}
	call := writeCall(r, p, memstoreDialect(r), slug, teammem.ScopeTeam, teammem.WriteRequest{})
	prop, found, err := s.writer.ReviewStoreFields(r.Context(), call, op, fields, base)
	org := p.Org.Slug
	action := "flagged"
	switch {
	case err != nil:
		action = "rejected"
		err = storeWriteError(err)
	case prop != nil:
		action = "held"
		s.metrics.Proposals.WithLabelValues(org, "created").Inc()
		err = prop.HeldError()
	}
	for _, f := range found {
		s.metrics.PoisonFindings.WithLabelValues(org, f.RuleID, action).Inc()
	}
	return found, err
}

// auditStoreFindings records the findings of a store change that applied
// (poisoning: flag) by rule id.
func (s *Server) auditStoreFindings(r *http.Request, p teammem.Principal, target string, found []teammem.PoisonFinding) {
	if len(found) > 0 {
		s.audit(r.Context(), p, "push.poisoning_flagged", "", target,
			map[string]any{"api": memstoreDialect(r), "rule_ids": teammem.PoisonRuleIDs(found)})
	}
}

// approveStoreChange applies an approved store change: the create it
// proposed (within the org's store cap), or its fields on the store as it
// was proposed against (409 when the store changed since; 400 when it was
// archived), then decides the proposal.
func (s *Server) approveStoreChange(w http.ResponseWriter, r *http.Request, p teammem.Principal, d wire.ProposalDecision, prop teammem.Proposal) error {
	ch, fields, _ := prop.StoreChange()
	var m teammem.MemoryStore
	var err error
	if ch.Op == teammem.OpStoreCreate {
		cp := teammem.MemoryStoreCreateParams{Metadata: fields.Metadata, MaxStores: s.maxStoresPerOrg()}
		if fields.Name != nil {
			cp.Name = *fields.Name
		}
		if fields.Description != nil {
			cp.Description = *fields.Description
		}
		if m, err = s.store.MemoryStoreCreate(r.Context(), p.Org.ID, cp); err != nil {
			return err
		}
	} else {
		uid, ok := teammem.StoreRepoUID(prop.Repo)
		if !ok {
			return teammem.Errorf(teammem.ENotFound, "the proposal's memory store no longer exists")
		}
		cur, err := s.store.MemoryStoreGet(r.Context(), p.Org.ID, uid)
		switch {
		case err != nil:
			return err
		case cur.Archived():
			return teammem.StoreArchived()
		case cur.FieldsChecksum() != ch.Base:
			return teammem.Errorf(teammem.EConflict, "the memory store's fields changed since proposal %d was made; reject it, or propose the change again", prop.ID)
		}
		if m, err = s.store.MemoryStoreUpdate(r.Context(), p.Org.ID, cur.Space.ID, teammem.MemoryStoreUpdateParams{
			Name: fields.Name, Description: fields.Description, Metadata: fields.Metadata}); err != nil {
			return err
		}
		s.storeChanged(r.Context(), cur)
	}
	decided, err := s.store.ProposalDecide(r.Context(), p.Org.ID, prop.ID,
		teammem.ProposalDecideParams{Status: teammem.ProposalApproved, By: p.User.ID, At: s.now(), Note: d.Note})
	if err != nil {
		return err
	}
	s.audit(r.Context(), p, "proposal.approve", prop.Repo, strconv.FormatInt(prop.ID, 10),
		map[string]any{"author": prop.Author, "op": string(ch.Op), "memory_store": m.ID()})
	s.metrics.Proposals.WithLabelValues(p.Org.Slug, "approved").Inc()
	decided.Findings = nonNil(decided.Findings)
	writeJSON(w, http.StatusOK, wire.ProposalApproved{Proposal: decided, Write: wire.WriteResult{SpaceHead: headOf(m.Space),
		Written: []string{}, Deleted: []string{}, SkippedSecrets: []teammem.SkippedSecret{}, SkippedTombstoned: []string{},
		Findings: []teammem.PoisonFinding{}}})
	return nil
}
