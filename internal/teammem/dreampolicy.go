package teammem

// TeamDreamPolicy says whether a repo's team store may be dreamed over,
// and whether the server does so by itself every night.
type TeamDreamPolicy string

// The team_dream policies.
const (
	TeamDreamOff     TeamDreamPolicy = "off"     // no dream of the team store, not even on request
	TeamDreamManual  TeamDreamPolicy = "manual"  // dreams on request only (the default)
	TeamDreamNightly TeamDreamPolicy = "nightly" // and a nightly dream, when enough was written since the last
)

// DefaultTeamDreamMinWrites is how many team writes since the last dream
// a nightly dream waits for, when the org sets no number.
const DefaultTeamDreamMinWrites = 10

// MaxTeamDreamMinWrites bounds team_dream_min_writes.
const MaxTeamDreamMinWrites = 1_000_000

// Valid reports whether p is a known policy.
func (p TeamDreamPolicy) Valid() bool {
	return p == TeamDreamOff || p == TeamDreamManual || p == TeamDreamNightly
}

// TeamDreamFor returns the team_dream policy of repo: its override when
// the org set one, else the org's policy, else manual.
func (s OrgSettings) TeamDreamFor(repo string) TeamDreamPolicy {
	if p, ok := s.TeamDreamRepos[repo]; ok && p.Valid() {
		return p
	}
	if s.TeamDream.Valid() {
		return s.TeamDream
	}
	return TeamDreamManual
}

// TeamDreamMinWritesOrDefault is the org's team_dream_min_writes, or
// DefaultTeamDreamMinWrites when unset.
func (s OrgSettings) TeamDreamMinWritesOrDefault() int {
	if s.TeamDreamMinWrites > 0 {
		return s.TeamDreamMinWrites
	}
	return DefaultTeamDreamMinWrites
}

// TeamDreamOffError is the refusal of a dream of a repo's team store
// whose team_dream is off.
func TeamDreamOffError(repo string) error {
	return Errorf(EInvalid, "dreams of %s's team memory are turned off: its org or repo setting team_dream is off (set it to manual or nightly)", repo)
}
