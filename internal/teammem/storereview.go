package teammem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
)

// Store fields under review (issue 21 point 5). An API store's name,
// description and metadata are read by every agent the store is given to,
// as surely as its memories: a change of them by a member is held for
// review under team_writes: review (or poisoning: review with findings),
// refused under poisoning: reject when the checks find something, and
// checked for poisoning like content in every case. A held change is a
// Proposal whose one change has op OpStoreCreate or OpStoreFields and the
// proposed fields, as JSON, for content.

// The ops of a proposal that changes a store's own fields.
const (
	// OpStoreCreate creates an API store with the proposed fields; its
	// proposal's Repo is empty (the store has none yet).
	OpStoreCreate Op = "store_create"
	// OpStoreFields changes an API store's fields; Base is the store's
	// FieldsChecksum when it was proposed, so an approval of a proposal
	// the store moved on from conflicts.
	OpStoreFields Op = "store_fields"
)

// StoreOp reports whether op changes a store's fields rather than an entry.
func StoreOp(op Op) bool { return op == OpStoreCreate || op == OpStoreFields }

// StoreFields are the fields a store change sets: nil fields stay as they
// are; Metadata, when not nil, is the whole new map.
type StoreFields struct {
	Name        *string           `json:"name,omitempty"`
	Description *string           `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// Texts returns the fields' text by what they are named in a finding
// ("name", "description", "metadata.<key>" for a value, "metadata key"
// for a key), in a fixed order.
func (f StoreFields) Texts() [][2]string {
	var out [][2]string
	if f.Name != nil {
		out = append(out, [2]string{"name", *f.Name})
	}
	if f.Description != nil {
		out = append(out, [2]string{"description", *f.Description})
	}
	keys := make([]string, 0, len(f.Metadata))
	for k := range f.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, [2]string{"metadata key", k}, [2]string{"metadata." + k, f.Metadata[k]})
	}
	return out
}

// FieldsChecksum fingerprints a store's own fields: "sha256:" + the hex
// SHA-256 of their JSON.
func (m MemoryStore) FieldsChecksum() string {
	meta := m.Metadata
	if meta == nil {
		meta = map[string]string{}
	}
	b, _ := json.Marshal(StoreFields{Name: &m.Name, Description: &m.Description, Metadata: meta}) // plain strings always marshal
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// StoreChange returns a proposal's store change and its fields, and
// whether it is one.
func (p Proposal) StoreChange() (ProposedChange, StoreFields, bool) {
	if len(p.Changes) != 1 || !StoreOp(p.Changes[0].Op) {
		return ProposedChange{}, StoreFields{}, false
	}
	var f StoreFields
	if json.Unmarshal([]byte(p.Changes[0].Content), &f) != nil {
		return ProposedChange{}, StoreFields{}, false
	}
	return p.Changes[0], f, true
}

// ReviewStoreFields runs the write path's rules on a store change of
// call's principal (call.Repo the store's hidden repo slug, "" for a
// create; call.Scope team): the poisoning checks on every field, then the
// org's policies. It returns the findings and, when the change must wait,
// the proposal it became (nil: apply it now). Under poisoning: reject a
// change with findings is refused (PoisonRejected), admins included.
func (w *Writer) ReviewStoreFields(ctx context.Context, call WriteCall, op Op, fields StoreFields, base string) (*Proposal, []PoisonFinding, error) {
	var found []PoisonFinding
	if w.Poison != nil {
		for _, t := range fields.Texts() {
			if t[1] != "" {
				found = append(found, w.Poison.CheckEntry(t[0], t[1])...)
			}
		}
	}
	limits := call.Principal.Org.Limits(w.Defaults)
	if rejectsPoison(call, limits) && len(found) > 0 {
		return nil, found, PoisonRejected(found)
	}
	reason := holdReason(call, limits)
	if reason == "" || reason == HeldPoisoning && len(found) == 0 {
		return nil, found, nil
	}
	content, err := json.Marshal(fields)
	if err != nil {
		return nil, found, err
	}
	p := call.Principal
	prop := Proposal{Repo: call.Repo, Scope: ScopeTeam, AuthorID: p.User.ID, Author: p.User.Handle, ClientID: call.ClientID,
		API: call.API, KeyID: p.Key.ID, SessionID: call.SessionID, Reason: reason, Findings: nonNilFindings(found),
		Changes: []ProposedChange{{Op: op, Content: string(content), Base: base}}}
	stored, err := w.storeProposal(ctx, call, prop)
	if err != nil {
		return nil, found, err
	}
	return &stored, found, nil
}
