package console

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// settingsSection is one part of the settings page: a template (named
// "settings-<Name>") that shows its fields, and the PATCH /v1/org fields
// it reads from the submitted form. A further org setting is a section
// appended to settingsSections; the page and its one PATCH need no other
// change.
type settingsSection struct {
	Name  string
	Title string
	patch func(form formValues, into map[string]any) error
}

// settingsSections are the sections of the settings page, in order.
var settingsSections = []settingsSection{
	{Name: "caps", Title: "Caps", patch: patchCaps},
	{Name: "secrets", Title: "Secret policy", patch: patchSecrets},
	{Name: "retention", Title: "History retention", patch: patchRetention},
	{Name: "review", Title: "Review before sharing", patch: patchReview},
	{Name: "poisoning", Title: "Poisoning checks", patch: patchPoisoning},
	{Name: "dreams", Title: "Dreams", patch: patchDreams},
}

// formValues reads a submitted form.
type formValues interface{ PostFormValue(string) string }

// settings serves /ui/settings: GET /v1/org; the form for org writers.
func (c *Console) settings(w http.ResponseWriter, r *http.Request, v *viewer) error {
	var org orgView
	if err := c.api(v).get(r.Context(), "/v1/org", &org); err != nil {
		return err
	}
	c.render(w, r, v, http.StatusOK, "settings", "Settings", struct {
		Org       orgView
		CanWrite  bool
		Sections  []settingsSection
		RuleIDs   string
		Regexes   string
		RepoRules string
		// DreamRules is team_dream_repos as RepoRules is team_writes_repos.
		DreamRules string
	}{org, v.can(teammem.ActOrgWrite, true), settingsSections,
		strings.Join(org.Org.Settings.SecretAllowlist.RuleIDs, "\n"), strings.Join(org.Org.Settings.SecretAllowlist.Regexes, "\n"),
		repoRules(org.Org.Settings.TeamWritesRepos), repoRules(org.Org.Settings.TeamDreamRepos)})
	return nil
}

// repoRules is a per-repository override map (team_writes_repos,
// team_dream_repos) as the settings textarea shows it: one "owner/name
// policy" a line, in slug order.
func repoRules[P ~string](m map[string]P) string {
	slugs := make([]string, 0, len(m))
	for slug := range m {
		slugs = append(slugs, slug)
	}
	slices.Sort(slugs)
	var b strings.Builder
	for _, slug := range slugs {
		fmt.Fprintf(&b, "%s %s\n", slug, m[slug])
	}
	return b.String()
}

// saveSettings serves POST /ui/settings: one PATCH /v1/org of every
// section's fields, which the API validates all before storing any.
func (c *Console) saveSettings(w http.ResponseWriter, r *http.Request, v *viewer) error {
	patch := map[string]any{}
	for _, s := range settingsSections {
		if err := s.patch(r, patch); err != nil {
			return err
		}
	}
	if err := c.api(v).do(r.Context(), http.MethodPatch, "/v1/org", patch, nil); err != nil {
		return err
	}
	http.Redirect(w, r, "/ui/settings?done=saved", http.StatusSeeOther)
	return nil
}

// intField puts a whole-number field of the form into the patch; an
// empty field is left out (unchanged).
func intField(form formValues, name string, into map[string]any) error {
	s := strings.TrimSpace(form.PostFormValue(name))
	if s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return teammem.Errorf(teammem.EInvalid, "%s must be a whole number", strings.ReplaceAll(name, "_", " "))
	}
	into[name] = n
	return nil
}

func patchCaps(form formValues, into map[string]any) error {
	if err := intField(form, "max_entries", into); err != nil {
		return err
	}
	if err := intField(form, "max_entry_bytes", into); err != nil {
		return err
	}
	into["auto_create_repos"] = form.PostFormValue("auto_create_repos") == "on"
	return nil
}

func patchSecrets(form formValues, into map[string]any) error {
	into["secret_policy"] = form.PostFormValue("secret_policy")
	into["secret_allowlist"] = map[string]any{"rule_ids": lines(form.PostFormValue("allow_rule_ids")), "regexes": lines(form.PostFormValue("allow_regexes"))}
	return nil
}

func patchRetention(form formValues, into map[string]any) error {
	if err := intField(form, "history_retention_days", into); err != nil {
		return err
	}
	return intField(form, "history_max_versions", into)
}

// lines splits a textarea into its non-empty trimmed lines.
func lines(s string) []string {
	out := []string{}
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func patchReview(form formValues, into map[string]any) error {
	into["team_writes"] = form.PostFormValue("team_writes")
	return repoRulesField(form, "team_writes_repos", `per-repository review, line %d: write "owner/name review" or "owner/name direct"`, into)
}

// repoRulesField puts a per-repository textarea into the patch as a map;
// bad is the message of a malformed line (with its number).
func repoRulesField(form formValues, name, bad string, into map[string]any) error {
	repos := map[string]string{}
	for i, l := range lines(form.PostFormValue(name)) {
		f := strings.Fields(l)
		if len(f) != 2 {
			return teammem.Errorf(teammem.EInvalid, bad, i+1)
		}
		repos[f[0]] = f[1] // the API checks the slug and the policy
	}
	into[name] = repos
	return nil
}

func patchDreams(form formValues, into map[string]any) error {
	into["team_dream"] = form.PostFormValue("team_dream")
	if err := intField(form, "team_dream_min_writes", into); err != nil {
		return err
	}
	return repoRulesField(form, "team_dream_repos", `per-repository dreams, line %d: write "owner/name off", "owner/name manual" or "owner/name nightly"`, into)
}

func patchPoisoning(form formValues, into map[string]any) error {
	into["poisoning"] = form.PostFormValue("poisoning")
	return nil
}
