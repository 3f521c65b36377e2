package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/teammem/teammem/internal/teammem"
)

// orgResponse is the body of GET and PATCH /v1/org: the org with the
// settings it chose (zero = server default) and the limits in effect.
type orgResponse struct {
	Org    teammem.Org `json:"org"`
	Limits limitsView  `json:"limits"`
}

// limitsView is teammem.Limits on the wire: the server defaults with the
// org's own settings applied.
type limitsView struct {
	MaxEntries      int                  `json:"max_entries"`
	MaxEntryBytes   int                  `json:"max_entry_bytes"`
	SecretPolicy    teammem.SecretPolicy `json:"secret_policy"`
	AutoCreateRepos bool                 `json:"auto_create_repos"`
	// HistoryRetentionDays and HistoryMaxVersions bound entry history.
	HistoryRetentionDays int `json:"history_retention_days"`
	HistoryMaxVersions   int `json:"history_max_versions"`
	// Poisoning is the poisoning policy in effect (flag when unset).
	Poisoning teammem.PoisoningPolicy `json:"poisoning"`
	// TeamWrites is the org's team write policy (direct when unset).
	TeamWrites teammem.TeamWritesPolicy `json:"team_writes"`
	// TeamDream is the org's team_dream policy (manual when unset) and
	// TeamDreamMinWrites the writes a nightly dream waits for.
	TeamDream          teammem.TeamDreamPolicy `json:"team_dream"`
	TeamDreamMinWrites int                     `json:"team_dream_min_writes"`
}

// orgPatch is the body of PATCH /v1/org; absent (or null) fields stay as
// they are and unknown fields are refused.
type orgPatch struct {
	// Name is the display name: 1-200 bytes, no control characters.
	Name *string `json:"name"`
	// MaxEntries caps live entries per space, up to the server's ceiling;
	// 0 returns to the server default.
	MaxEntries *int `json:"max_entries"`
	// MaxEntryBytes caps one entry; 0 returns to the server default, which
	// is also the ceiling (an org may only lower it).
	MaxEntryBytes *int `json:"max_entry_bytes"`
	// SecretPolicy is "skip", "reject" or "" (the server default).
	SecretPolicy *teammem.SecretPolicy `json:"secret_policy"`
	// SecretAllowlist replaces the whole allowlist; every regex must compile.
	SecretAllowlist *teammem.Allowlist `json:"secret_allowlist"`
	// AutoCreateRepos says whether a first push creates a repo.
	AutoCreateRepos *bool `json:"auto_create_repos"`
	// HistoryRetentionDays keeps entry versions this many days; 0 returns
	// to the server default.
	HistoryRetentionDays *int `json:"history_retention_days"`
	// HistoryMaxVersions keeps at most this many versions per entry; 0
	// returns to the server default.
	HistoryMaxVersions *int `json:"history_max_versions"`
	// Poisoning is "flag", "review", "reject" or "" (flag).
	Poisoning *teammem.PoisoningPolicy `json:"poisoning"`
	// TeamWrites is "direct", "review" or "" (direct).
	TeamWrites *teammem.TeamWritesPolicy `json:"team_writes"`
	// TeamWritesRepos replaces the per-repository overrides of
	// team_writes: repo slug → "direct" or "review".
	TeamWritesRepos *map[string]teammem.TeamWritesPolicy `json:"team_writes_repos"`
	// TeamDream is "off", "manual", "nightly" or "" (manual).
	TeamDream *teammem.TeamDreamPolicy `json:"team_dream"`
	// TeamDreamRepos replaces the per-repository overrides of team_dream.
	TeamDreamRepos *map[string]teammem.TeamDreamPolicy `json:"team_dream_repos"`
	// TeamDreamMinWrites is how many team writes a nightly dream waits
	// for; 0 returns to the default (10).
	TeamDreamMinWrites *int `json:"team_dream_min_writes"`
}

// Bounds of the allowlist, so one org cannot make every scan slow.
const (
	maxAllowlistItems = 200
	maxAllowlistRegex = 1024 // bytes per regex
	maxNameLength     = 200  // bytes of an org or key name
)

func (s *Server) orgResponse(o teammem.Org) orgResponse {
	l := o.Limits(s.cfg.Defaults)
	return orgResponse{Org: orgView(o), Limits: limitsView{MaxEntries: l.MaxEntries, MaxEntryBytes: l.MaxEntryBytes,
		SecretPolicy: l.SecretPolicy, AutoCreateRepos: l.AutoCreateRepos,
		HistoryRetentionDays: l.HistoryRetentionDays, HistoryMaxVersions: l.HistoryMaxVersions,
		Poisoning: l.Poisoning, TeamWrites: o.Settings.TeamWritesFor(""),
		TeamDream: o.Settings.TeamDreamFor(""), TeamDreamMinWrites: o.Settings.TeamDreamMinWritesOrDefault()}}
}

// orgView returns o as it goes on the wire: allowlist lists are [] rather
// than null.
func orgView(o teammem.Org) teammem.Org {
	a := &o.Settings.SecretAllowlist
	a.RuleIDs, a.Regexes = nonNil(a.RuleIDs), nonNil(a.Regexes)
	return o
}

// getOrg serves GET /v1/org.
func (s *Server) getOrg(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActOrgRead, false); err != nil {
		return err
	}
	org, err := s.store.OrgGet(r.Context(), p.Org.ID)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", orgETag(org))
	writeJSON(w, http.StatusOK, s.orgResponse(org))
	return nil
}

// orgETag names the state of an org's name and settings, for If-Match on
// PATCH /v1/org: a client that read the settings can make sure nobody
// changed them before its change lands.
func orgETag(o teammem.Org) string {
	b, _ := json.Marshal(struct {
		Name     string              `json:"name"`
		Settings teammem.OrgSettings `json:"settings"`
	}{o.Name, o.Settings})
	sum := sha256.Sum256(b)
	return `"org-` + hex.EncodeToString(sum[:16]) + `"`
}

// patchOrg serves PATCH /v1/org: it validates every given setting before
// storing any.
func (s *Server) patchOrg(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActOrgWrite, true); err != nil {
		return err
	}
	var body orgPatch
	if err := decodeStrictJSON(r, &body); err != nil {
		return err
	}
	ifMatch := strings.TrimSpace(r.Header.Get("If-Match"))
	var changed []string
	// The patch applies to the settings as stored at commit time, under the
	// org's lock, so concurrent patches of different fields all land.
	org, err := s.store.OrgEdit(r.Context(), p.Org.ID, func(cur teammem.Org) (teammem.OrgUpdateParams, error) {
		if ifMatch != "" && ifMatch != "*" && ifMatch != orgETag(cur) {
			return teammem.OrgUpdateParams{}, teammem.Errorf(teammem.EPreconditionFailed,
				"the org's settings changed since they were read: If-Match does not match").
				WithDetails(map[string]any{"etag": orgETag(cur)})
		}
		upd, fields, err := s.applyOrgPatch(cur, body)
		changed = fields
		return upd, err
	})
	if err != nil {
		return err
	}
	if len(changed) > 0 {
		s.invalidateAuth(r.Context(), p.Org.ID)
		s.audit(r.Context(), p, "org.update", "", org.Slug, orgAuditDetails(org, changed))
	}
	w.Header().Set("ETag", orgETag(org))
	writeJSON(w, http.StatusOK, s.orgResponse(org))
	return nil
}

// applyOrgPatch validates b against org and the server's limits and returns
// the update and the names of the fields it sets.
func (s *Server) applyOrgPatch(org teammem.Org, b orgPatch) (teammem.OrgUpdateParams, []string, error) {
	var upd teammem.OrgUpdateParams
	var changed []string
	if b.Name != nil {
		name, err := validateName("name", *b.Name, true)
		if err != nil {
			return upd, nil, err
		}
		upd.Name = &name
		changed = append(changed, "name")
	}
	set := org.Settings
	fields, err := s.patchSettings(&set, b)
	if err != nil {
		return upd, nil, err
	}
	if len(fields) > 0 {
		upd.Settings = &set
	}
	return upd, append(changed, fields...), nil
}

// patchSettings applies b's settings to set and returns the names of the
// fields it set.
func (s *Server) patchSettings(set *teammem.OrgSettings, b orgPatch) ([]string, error) {
	var changed []string
	if b.MaxEntries != nil {
		if *b.MaxEntries < 0 {
			return nil, teammem.Errorf(teammem.EInvalid, "max_entries must be 0 (server default) or more")
		}
		if c := s.cfg.Defaults.MaxEntriesCeiling; c > 0 && *b.MaxEntries > c {
			return nil, teammem.Errorf(teammem.EInvalid, "max_entries must be at most the server's ceiling, %d (TEAMMEM_MAX_ENTRIES_CEILING)", c).
				WithDetails(map[string]any{"server_max_entries_ceiling": c})
		}
		set.MaxEntries = *b.MaxEntries
		changed = append(changed, "max_entries")
	}
	if b.MaxEntryBytes != nil {
		if n := *b.MaxEntryBytes; n < 0 || n > s.cfg.Defaults.MaxEntryBytes {
			return nil, teammem.Errorf(teammem.EInvalid, "max_entry_bytes must be between 0 (server default) and the server's %d",
				s.cfg.Defaults.MaxEntryBytes).WithDetails(map[string]any{"server_max_entry_bytes": s.cfg.Defaults.MaxEntryBytes})
		}
		set.MaxEntryBytes = *b.MaxEntryBytes
		changed = append(changed, "max_entry_bytes")
	}
	if b.SecretPolicy != nil {
		if pol := *b.SecretPolicy; pol != "" && !pol.Valid() {
			return nil, teammem.Errorf(teammem.EInvalid, `secret_policy must be "skip", "reject" or "" (server default)`)
		}
		set.SecretPolicy = *b.SecretPolicy
		changed = append(changed, "secret_policy")
	}
	if b.SecretAllowlist != nil {
		a := *b.SecretAllowlist
		if err := validateAllowlist(a); err != nil {
			return nil, err
		}
		set.SecretAllowlist = teammem.Allowlist{RuleIDs: nonNil(a.RuleIDs), Regexes: nonNil(a.Regexes)}
		changed = append(changed, "secret_allowlist")
	}
	if b.AutoCreateRepos != nil {
		v := *b.AutoCreateRepos
		set.AutoCreateRepos = &v
		changed = append(changed, "auto_create_repos")
	}
	history, err := patchHistory(set, b)
	if err != nil {
		return nil, err
	}
	review, err := patchReview(set, b)
	if err != nil {
		return nil, err
	}
	dream, err := patchDream(set, b)
	return append(append(append(changed, history...), review...), dream...), err
}

// maxTeamWritesRepos bounds the per-repository overrides of team_writes.
const maxTeamWritesRepos = 1000

// patchReview applies the poisoning and review settings of a PATCH.
func patchReview(set *teammem.OrgSettings, b orgPatch) ([]string, error) {
	var changed []string
	if b.Poisoning != nil {
		if pol := *b.Poisoning; pol != "" && !pol.Valid() {
			return nil, teammem.Errorf(teammem.EInvalid, `poisoning must be "flag", "review", "reject" or "" (flag)`)
		}
		set.Poisoning = *b.Poisoning
		changed = append(changed, "poisoning")
	}
	if b.TeamWrites != nil {
		if pol := *b.TeamWrites; pol != "" && !pol.Valid() {
			return nil, teammem.Errorf(teammem.EInvalid, `team_writes must be "direct", "review" or "" (direct)`)
		}
		set.TeamWrites = *b.TeamWrites
		changed = append(changed, "team_writes")
	}
	if b.TeamWritesRepos != nil {
		repos := *b.TeamWritesRepos
		if err := validateRepoOverrides("team_writes_repos", repos, `"direct" or "review"`); err != nil {
			return nil, err
		}
		set.TeamWritesRepos = repos
		if len(repos) == 0 {
			set.TeamWritesRepos = nil
		}
		changed = append(changed, "team_writes_repos")
	}
	return changed, nil
}

func validateAllowlist(a teammem.Allowlist) error {
	if len(a.RuleIDs) > maxAllowlistItems || len(a.Regexes) > maxAllowlistItems {
		return teammem.Errorf(teammem.EInvalid, "secret_allowlist may list at most %d rule ids and %d regexes", maxAllowlistItems, maxAllowlistItems)
	}
	for _, re := range a.Regexes {
		if len(re) > maxAllowlistRegex {
			return teammem.Errorf(teammem.EInvalid, "secret_allowlist regexes must be at most %d bytes", maxAllowlistRegex)
		}
	}
	return a.Validate()
}

// orgAuditDetails describes an org update for the audit log: the fields set
// and their new values, except the allowlist's regexes, which may quote
// parts of real credentials and are logged as counts.
func orgAuditDetails(o teammem.Org, changed []string) map[string]any {
	d := map[string]any{"fields": changed}
	st := o.Settings
	for _, f := range changed {
		switch f {
		case "name":
			d["name"] = o.Name
		case "max_entries":
			d["max_entries"] = st.MaxEntries
		case "max_entry_bytes":
			d["max_entry_bytes"] = st.MaxEntryBytes
		case "secret_policy":
			d["secret_policy"] = st.SecretPolicy
		case "secret_allowlist":
			d["allowlist_rule_ids"] = st.SecretAllowlist.RuleIDs
			d["allowlist_regexes"] = len(st.SecretAllowlist.Regexes)
		case "auto_create_repos":
			d["auto_create_repos"] = st.AutoCreateRepos != nil && *st.AutoCreateRepos
		case "history_retention_days":
			d["history_retention_days"] = st.HistoryRetentionDays
		case "history_max_versions":
			d["history_max_versions"] = st.HistoryMaxVersions
		case "poisoning":
			d["poisoning"] = st.Poisoning
		case "team_writes":
			d["team_writes"] = st.TeamWrites
		case "team_writes_repos":
			d["team_writes_repos"] = st.TeamWritesRepos
		case "team_dream":
			d["team_dream"] = st.TeamDream
		case "team_dream_repos":
			d["team_dream_repos"] = st.TeamDreamRepos
		case "team_dream_min_writes":
			d["team_dream_min_writes"] = st.TeamDreamMinWrites
		}
	}
	return d
}

// listRepos serves GET /v1/repos: the org's repos with their team space
// heads (version 0 and the empty checksum for a repo never written).
func (s *Server) listRepos(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActOrgRead, false); err != nil {
		return err
	}
	repos, err := s.store.RepoList(r.Context(), p.Org.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"repos": nonNil(repos)})
	return nil
}

// validateName trims a display name (org or key) and checks it: printable,
// at most maxNameLength bytes and, when required, not empty.
func validateName(field, name string, required bool) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case required && name == "":
		return "", teammem.Errorf(teammem.EInvalid, "%s must not be empty", field)
	case len(name) > maxNameLength:
		return "", teammem.Errorf(teammem.EInvalid, "%s must be at most %d bytes", field, maxNameLength)
	case strings.IndexFunc(name, func(c rune) bool { return !unicode.IsPrint(c) && c != ' ' }) >= 0:
		return "", teammem.Errorf(teammem.EInvalid, "%s must not contain control characters", field)
	}
	return name, nil
}

// decodeStrictJSON is decodeJSON refusing fields the target does not have,
// so a misspelt setting is an error instead of a silent no-op.
func decodeStrictJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return err
		}
		if name, ok := unknownJSONField(err); ok {
			return teammem.Errorf(teammem.EInvalid, "request body has an unknown field %s", name)
		}
		return teammem.Errorf(teammem.EInvalid, "request body is not valid JSON of the expected shape: %s", jsonErrorText(err))
	}
	if dec.More() {
		return teammem.Errorf(teammem.EInvalid, "request body has data after the JSON value")
	}
	return nil
}

// unknownJSONField returns the quoted field name of encoding/json's
// unknown-field error (which has no type of its own).
func unknownJSONField(err error) (string, bool) {
	name, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	if u, err := strconv.Unquote(name); err != nil || len(u) > 64 {
		return "", false
	}
	return name, true
}
