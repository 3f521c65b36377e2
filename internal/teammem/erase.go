package teammem

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Erasure reaches every copy (issue 21 point 3). A held write keeps its
// content in its proposal, approved, rejected or pending; so does each
// poisoning finding's excerpt. When a version is redacted, every proposal
// of the same space whose change of the same entry proposed exactly that
// content loses it; when a space's history is purged, every proposal of
// the space loses all of its content. The proposal's record stays (who,
// when, which entries, the decision), each erased change says Redacted,
// and a pending proposal with an erased change can no longer be approved.

// ProposalErasure says which proposed content an erasure removes.
type ProposalErasure struct {
	// Key is the entry whose changes lose their content; "" for every
	// entry (a purge of the space's history).
	Key string
	// Checksum, when not "", limits the erasure to the changes whose
	// content has this EntryChecksum (a redaction of one version).
	Checksum string
}

// Matches reports whether e erases the content of change c. Deletions
// have no content to erase.
func (e ProposalErasure) Matches(c ProposedChange) bool {
	if c.Op == OpDelete || c.Redacted || (e.Key != "" && c.Key != e.Key) {
		return false
	}
	return e.Checksum == "" || EntryChecksum(c.Content) == e.Checksum
}

// LikePattern returns a SQL LIKE pattern (escape character '\') that every
// proposal e may touch matches in its stored changes column, so a driver
// decodes only those: the key as it appears JSON-encoded.
func (e ProposalErasure) LikePattern() string {
	if e.Key == "" {
		return "%"
	}
	key := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(jsonString(e.Key))
	return "%" + key + "%"
}

// EraseProposals erases e from each of found (EraseProposal) and hands
// every proposal it changed to put, with its changes encoded as stored;
// it returns how many it changed. Drivers supply the SQL of put.
func EraseProposals(found []Proposal, e ProposalErasure, put func(p Proposal, changes string) error) (int, error) {
	n := 0
	for _, p := range found {
		p, ok := EraseProposal(p, e)
		if !ok {
			continue
		}
		changes, err := json.Marshal(p.Changes)
		if err != nil {
			return n, err
		}
		if err := put(p, string(changes)); err != nil {
			return n, fmt.Errorf("erase proposal %d: %w", p.ID, err)
		}
		n++
	}
	return n, nil
}

// EraseProposal returns p with the content e matches removed from its
// changes, and the excerpts of the findings on those entries, and whether
// anything was removed.
func EraseProposal(p Proposal, e ProposalErasure) (Proposal, bool) {
	erased := map[string]bool{}
	changes := make([]ProposedChange, len(p.Changes))
	for i, c := range p.Changes {
		if e.Matches(c) {
			c.Content, c.Redacted = "", true
			erased[c.Key] = true
		}
		changes[i] = c
	}
	if len(erased) == 0 {
		return p, false
	}
	findings := make([]PoisonFinding, len(p.Findings))
	for i, f := range p.Findings {
		if erased[f.Path] {
			f.Excerpt = ""
		}
		findings[i] = f
	}
	p.Changes, p.Findings, p.Redacted = changes, findings, true
	return p, true
}

// checkApproval refuses to apply a proposal whose content was erased
// (EGone): its changes no longer hold what was proposed.
func checkApproval(p *Proposal) error {
	if p == nil || !HasRedacted(p.Changes) {
		return nil
	}
	for _, c := range p.Changes {
		if c.Redacted {
			return Errorf(EGone, "proposal %d cannot be applied: the content it proposed for %q was redacted; reject it", p.ID, c.Key).
				WithDetails(map[string]any{"proposal_id": p.ID, "key": c.Key})
		}
	}
	return nil
}

// jsonString is s as encoding/json writes it, which is how the drivers
// store a proposal's changes.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
