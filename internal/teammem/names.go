package teammem

import "strings"

// A secret rule often wants its token followed by a space, a quote or the
// end of a line (gitleaks' npm, GCP and Databricks rules among them): in
// prose it is, in a file name it is followed by ".md" or "/" or "-notes".
// So a name is scanned as written and in two more views, one a line each.

var (
	// nameSeparators breaks a name at its path separators and dots.
	nameSeparators = strings.NewReplacer("/", "\n", ".", "\n")
	// namePunctuation breaks it at every mark a file name or a slug may
	// hold but '_' (which is part of many tokens).
	namePunctuation = strings.NewReplacer("/", "\n", ".", "\n", "-", "\n", "+", "\n", "=", "\n", ",", "\n", "(", "\n", ")", "\n",
		"[", "\n", "]", "\n", "{", "\n", "}", "\n", "~", "\n", "@", "\n", "#", "\n", "'", "\n", "\"", "\n", ":", "\n", " ", "\n")
)

// NameScanText is the text a secret scanner scans for a name — an entry
// key, a repo slug, a store's field, a refusal's message that names one:
// the name as written, then broken at its separators and dots, then at
// every punctuation mark but '_', each view on lines of its own, so that a
// token a rule wants followed by a space or a line's end is found wherever
// it stands in the name. A finding in it is a finding in the name.
func NameScanText(name string) string {
	return name + "\n" + nameSeparators.Replace(name) + "\n" + namePunctuation.Replace(name) + "\n"
}
