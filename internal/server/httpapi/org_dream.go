package httpapi

import "github.com/teammem/teammem/internal/teammem"

// validateRepoOverrides checks a per-repository override map of a setting
// (team_writes_repos, team_dream_repos): at most maxTeamWritesRepos valid
// repo slugs, each with a valid policy (allowed says which, for the
// message).
func validateRepoOverrides[P interface{ Valid() bool }](field string, repos map[string]P, allowed string) error {
	if len(repos) > maxTeamWritesRepos {
		return teammem.Errorf(teammem.EInvalid, "%s may name at most %d repositories", field, maxTeamWritesRepos)
	}
	for slug, pol := range repos {
		if err := teammem.ValidateRepoSlug(slug); err != nil {
			return teammem.Errorf(teammem.EInvalid, "%s: %s", field, teammem.ErrorMessage(err))
		}
		if !pol.Valid() {
			return teammem.Errorf(teammem.EInvalid, "%s[%q] must be %s", field, slug, allowed)
		}
	}
	return nil
}

// patchDream applies the team_dream settings of a PATCH.
func patchDream(set *teammem.OrgSettings, b orgPatch) ([]string, error) {
	var changed []string
	if b.TeamDream != nil {
		if pol := *b.TeamDream; pol != "" && !pol.Valid() {
			return nil, teammem.Errorf(teammem.EInvalid, `team_dream must be "off", "manual", "nightly" or "" (manual)`)
		}
		set.TeamDream = *b.TeamDream
		changed = append(changed, "team_dream")
	}
	if b.TeamDreamRepos != nil {
		repos := *b.TeamDreamRepos
		if err := validateRepoOverrides("team_dream_repos", repos, `"off", "manual" or "nightly"`); err != nil {
			return nil, err
		}
		set.TeamDreamRepos = repos
		if len(repos) == 0 {
			set.TeamDreamRepos = nil
		}
		changed = append(changed, "team_dream_repos")
	}
	if b.TeamDreamMinWrites != nil {
		if n := *b.TeamDreamMinWrites; n < 0 || n > teammem.MaxTeamDreamMinWrites {
			return nil, teammem.Errorf(teammem.EInvalid, "team_dream_min_writes must be 0 (default %d) to %d",
				teammem.DefaultTeamDreamMinWrites, teammem.MaxTeamDreamMinWrites)
		}
		set.TeamDreamMinWrites = *b.TeamDreamMinWrites
		changed = append(changed, "team_dream_min_writes")
	}
	return changed, nil
}
