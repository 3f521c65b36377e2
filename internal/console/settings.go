package console

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// settingsSection is one part of the settings page: a template (named
// "settings-<Name>") that shows its fields, and the PATCH /v1/org fields
// it reads from the submitted form. Further org settings (review policy,
// poisoning policy) are sections appended to settingsSections; the page
// and its one PATCH need no other change.
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
	{Name: "review", Title: "Review and poisoning policy", patch: func(formValues, map[string]any) error { return nil }},
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
		Org      orgView
		CanWrite bool
		Sections []settingsSection
		RuleIDs  string
		Regexes  string
	}{org, v.can(teammem.ActOrgWrite, true), settingsSections,
		strings.Join(org.Org.Settings.SecretAllowlist.RuleIDs, "\n"), strings.Join(org.Org.Settings.SecretAllowlist.Regexes, "\n")})
	return nil
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
