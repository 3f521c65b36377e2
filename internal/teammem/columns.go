package teammem

import (
	"encoding/json"
	"fmt"
	"time"
)

// Both dialects keep the domain's structured fields as JSON text, so how a
// field is written and read back is decided here once; a driver only moves
// the text in and out of its column.

// EncodeOrgSettings is settings as an org's settings column holds them.
func EncodeOrgSettings(s OrgSettings) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}

// EncodeOrgSettingsChange is EncodeOrgSettings for an update: nil, so that
// the stored settings stay, when s is nil.
func EncodeOrgSettingsChange(s *OrgSettings) (*string, error) {
	if s == nil {
		return nil, nil
	}
	text, err := EncodeOrgSettings(*s)
	return &text, err
}

// DecodeOrgSettings reads the settings column of org orgID.
func DecodeOrgSettings(orgID int64, text string) (OrgSettings, error) {
	var s OrgSettings
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return s, fmt.Errorf("decode org %d settings: %w", orgID, err)
	}
	return s, nil
}

// EncodeAuditDetails is an audit event's details as stored: a JSON object,
// "{}" when there are none.
func EncodeAuditDetails(d map[string]any) (string, error) {
	if d == nil {
		return "{}", nil
	}
	b, err := json.Marshal(d)
	return string(b), err
}

// DecodeAuditDetails reads what EncodeAuditDetails stored: nil for an
// event without details, as it was appended.
func DecodeAuditDetails(text string) (map[string]any, error) {
	var d map[string]any
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		return nil, err
	}
	if len(d) == 0 {
		return nil, nil
	}
	return d, nil
}

// EncodeStoreMetadata is a memory store's metadata as stored: a JSON
// object, "{}" when there is none.
func EncodeStoreMetadata(m map[string]string) (string, error) {
	if m == nil {
		m = map[string]string{}
	}
	b, err := json.Marshal(m)
	return string(b), err
}

// DecodeStoreMetadata reads what EncodeStoreMetadata stored; "" (a repo
// space, which has no store row) is no metadata.
func DecodeStoreMetadata(text string) (map[string]string, error) {
	if text == "" {
		return nil, nil
	}
	var m map[string]string
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, fmt.Errorf("store metadata: %w", err)
	}
	return m, nil
}

// EncodeProposalChanges is a proposal's changes as its changes column
// holds them.
func EncodeProposalChanges(changes []ProposedChange) (string, error) {
	b, err := json.Marshal(changes)
	return string(b), err
}

// DecodeProposalColumns fills p from its changes and findings columns:
// the changes, whether any was redacted, and the findings.
func DecodeProposalColumns(p *Proposal, changes, findings string) error {
	if err := json.Unmarshal([]byte(changes), &p.Changes); err != nil {
		return err
	}
	p.Findings = DecodeFindings(findings)
	p.Redacted = HasRedacted(p.Changes)
	return nil
}

// StoreTimes are a memory store's created and updated times, from its
// store row's (nil for a repo space, which has no store row) and its repo's
// creation. A store's updated_at moves with its own fields (name,
// description, metadata, archiving), never with its memories; a repo space
// has none, so it keeps its creation time.
func StoreTimes(repoCreated time.Time, created, updated *time.Time) (createdAt, updatedAt time.Time) {
	switch {
	case created == nil:
		return repoCreated, repoCreated
	case updated == nil:
		return *created, *created
	}
	return *created, *updated
}

// CompleteTeam fills in the team head of a repo summary as a store read it
// with its repo: its ids and scope and, for a repo whose team space was
// never written (no row, so no checksum), the empty space's checksum.
func (s *RepoSummary) CompleteTeam() {
	s.Team.OrgID, s.Team.RepoID, s.Team.Scope = s.OrgID, s.ID, ScopeTeam
	if s.Team.Checksum == "" {
		s.Team.Checksum = EmptySpaceChecksum
	}
}

// MigrationsClean is the check a store's Ping makes of its migration
// table: a migration that failed half-way (dirty) leaves a schema no code
// can trust, so the store is unavailable until an operator repairs it.
func MigrationsClean(version int64, dirty bool) error {
	if dirty {
		return Errorf(EUnavailable, "database migration %d is dirty", version)
	}
	return nil
}
