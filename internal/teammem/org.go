package teammem

import (
	"regexp"
	"time"
)

// Org is a tenant. Every other record belongs to exactly one org.
type Org struct {
	ID        int64       `json:"-"`
	Slug      string      `json:"slug"`
	Name      string      `json:"name"`
	Settings  OrgSettings `json:"settings"`
	Disabled  bool        `json:"disabled"`
	CreatedAt time.Time   `json:"created_at"`
}

// SecretPolicy says what happens to an entry in which a secret was found.
type SecretPolicy string

// The secret policies.
const (
	SecretPolicySkip   SecretPolicy = "skip"   // store the clean entries, report the rest
	SecretPolicyReject SecretPolicy = "reject" // refuse the whole write
)

// Valid reports whether p is a known policy.
func (p SecretPolicy) Valid() bool { return p == SecretPolicySkip || p == SecretPolicyReject }

// OrgSettings are the org-level knobs. Zero values mean "use the server's
// default", so a server-wide change of a default reaches every org that never
// chose its own value.
type OrgSettings struct {
	MaxEntries      int          `json:"max_entries,omitempty"`
	MaxEntryBytes   int          `json:"max_entry_bytes,omitempty"`
	SecretPolicy    SecretPolicy `json:"secret_policy,omitempty"`
	SecretAllowlist Allowlist    `json:"secret_allowlist"`
	// AutoCreateRepos is a pointer so that "unset" (true) differs from false.
	AutoCreateRepos *bool `json:"auto_create_repos,omitempty"`
	// HistoryRetentionDays is how long entry versions are kept, in days.
	HistoryRetentionDays int `json:"history_retention_days,omitempty"`
	// HistoryMaxVersions is how many versions of one entry are kept.
	HistoryMaxVersions int `json:"history_max_versions,omitempty"`
	// Poisoning says what a team write with poisoning findings does
	// (default flag).
	Poisoning PoisoningPolicy `json:"poisoning,omitempty"`
	// TeamWrites says whether members' team writes apply directly or are
	// held for an admin's review (default direct); TeamWritesRepos
	// overrides it per repository slug.
	TeamWrites      TeamWritesPolicy            `json:"team_writes,omitempty"`
	TeamWritesRepos map[string]TeamWritesPolicy `json:"team_writes_repos,omitempty"`
	// TeamDream says whether a repo's team store may be dreamed over and
	// whether nightly (default manual); TeamDreamRepos overrides it per
	// repository slug; TeamDreamMinWrites is how many team writes since
	// the last dream a nightly one waits for (0: the default, 10).
	TeamDream          TeamDreamPolicy            `json:"team_dream,omitempty"`
	TeamDreamRepos     map[string]TeamDreamPolicy `json:"team_dream_repos,omitempty"`
	TeamDreamMinWrites int                        `json:"team_dream_min_writes,omitempty"`
}

// Allowlist names secret-scanner findings an org accepts: whole rules by id,
// or any finding whose matched text matches one of the regexes.
type Allowlist struct {
	RuleIDs []string `json:"rule_ids"`
	Regexes []string `json:"regexes"`
}

// Validate checks that every regex compiles.
func (a Allowlist) Validate() error {
	for _, r := range a.Regexes {
		if _, err := regexp.Compile(r); err != nil {
			return Errorf(EInvalid, "secret allowlist regex %q does not compile: %v", r, err)
		}
	}
	for _, id := range a.RuleIDs {
		if id == "" {
			return Errorf(EInvalid, "secret allowlist rule id is empty")
		}
	}
	return nil
}

// Limits are the effective caps for one org after applying server defaults.
type Limits struct {
	MaxEntries      int
	MaxEntryBytes   int
	SecretPolicy    SecretPolicy
	AutoCreateRepos bool
	// HistoryRetentionDays and HistoryMaxVersions bound entry history: the
	// retention sweep deletes versions older than the days or beyond the
	// count per entry, always keeping each entry's newest version.
	HistoryRetentionDays int
	HistoryMaxVersions   int
	// Poisoning is the org's poisoning policy (flag when unset).
	Poisoning PoisoningPolicy
}

// ServerDefaults are the values an org inherits when it sets none.
type ServerDefaults struct {
	MaxEntries           int          // TEAMMEM_DEFAULT_MAX_ENTRIES
	MaxEntryBytes        int          // TEAMMEM_MAX_ENTRY_BYTES, also a ceiling for orgs
	SecretPolicy         SecretPolicy // TEAMMEM_SECRET_POLICY
	HistoryRetentionDays int          // TEAMMEM_HISTORY_RETENTION
	HistoryMaxVersions   int          // TEAMMEM_HISTORY_MAX_VERSIONS
	// MaxEntriesCeiling is the most live entries per space any org may
	// allow itself (TEAMMEM_MAX_ENTRIES_CEILING); 0 means no ceiling. It
	// bounds what one pull can weigh, whatever an org's admin sets.
	MaxEntriesCeiling int
}

// DefaultServerDefaults are the built-in defaults of design §3.
var DefaultServerDefaults = ServerDefaults{MaxEntries: 500, MaxEntryBytes: 250_000, SecretPolicy: SecretPolicySkip,
	HistoryRetentionDays: 90, HistoryMaxVersions: 100, MaxEntriesCeiling: 5000}

// Bounds of an org's own history retention, so that a typo cannot ask for
// forever; the server's defaults are bounded the same way.
const (
	MaxHistoryRetentionDays = 36_500 // a hundred years
	MaxHistoryMaxVersions   = 1_000_000
)

// Limits returns the org's effective limits. An org may lower the entry size
// cap but never raise it above the server's, and may set its entry count
// cap up to the server's ceiling: a setting stored above it (before the
// ceiling existed, or lowered since) counts as the ceiling. It may keep
// history shorter or longer than the server's default.
func (o Org) Limits(d ServerDefaults) Limits {
	l := Limits{MaxEntries: d.MaxEntries, MaxEntryBytes: d.MaxEntryBytes, SecretPolicy: d.SecretPolicy, AutoCreateRepos: true,
		HistoryRetentionDays: d.HistoryRetentionDays, HistoryMaxVersions: d.HistoryMaxVersions}
	s := o.Settings
	if s.MaxEntries > 0 {
		l.MaxEntries = s.MaxEntries
	}
	if d.MaxEntriesCeiling > 0 && l.MaxEntries > d.MaxEntriesCeiling {
		l.MaxEntries = d.MaxEntriesCeiling
	}
	if s.MaxEntryBytes > 0 && s.MaxEntryBytes < l.MaxEntryBytes {
		l.MaxEntryBytes = s.MaxEntryBytes
	}
	if s.SecretPolicy.Valid() {
		l.SecretPolicy = s.SecretPolicy
	}
	if s.AutoCreateRepos != nil {
		l.AutoCreateRepos = *s.AutoCreateRepos
	}
	if s.HistoryRetentionDays > 0 {
		l.HistoryRetentionDays = s.HistoryRetentionDays
	}
	if s.HistoryMaxVersions > 0 {
		l.HistoryMaxVersions = s.HistoryMaxVersions
	}
	l.Poisoning = PoisoningFlag
	if s.Poisoning.Valid() {
		l.Poisoning = s.Poisoning
	}
	return l
}

// TeamWritesFor returns the team write policy of repo: its override when
// the org set one, else the org's policy, else direct.
func (s OrgSettings) TeamWritesFor(repo string) TeamWritesPolicy {
	if p, ok := s.TeamWritesRepos[repo]; ok && p.Valid() {
		return p
	}
	if s.TeamWrites.Valid() {
		return s.TeamWrites
	}
	return TeamWritesDirect
}

var slugRE = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$`)

// ValidateOrgSlug checks an org slug: lowercase letters, digits and inner
// hyphens, at most 64 characters.
func ValidateOrgSlug(slug string) error {
	if !slugRE.MatchString(slug) {
		return Errorf(EInvalid, "org slug %q must be 1-64 lowercase letters, digits or inner hyphens", slug)
	}
	return nil
}
