package secretscan

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Finding is one rule firing on one line. It deliberately has no field for
// the matched text: a Finding can be logged, stored or sent to a client.
type Finding struct {
	// RuleID is the gitleaks rule id, such as "github-pat".
	RuleID string `json:"ruleId"`
	// Label is the readable name of the rule, Label(RuleID).
	Label string `json:"label"`
	// Line is the 1-based line on which the match starts.
	Line int `json:"line"`
}

// String returns the finding as "GitHub PAT (github-pat) on line 3".
func (f Finding) String() string {
	return fmt.Sprintf("%s (%s) on line %d", f.Label, f.RuleID, f.Line)
}

// labelWords spells the id parts that plain capitalisation gets wrong.
var labelWords = map[string]string{
	"aws":          "AWS",
	"gcp":          "GCP",
	"api":          "API",
	"pat":          "PAT",
	"ad":           "AD",
	"tf":           "TF",
	"oauth":        "OAuth",
	"npm":          "NPM",
	"pypi":         "PyPI",
	"jwt":          "JWT",
	"github":       "GitHub",
	"gitlab":       "GitLab",
	"openai":       "OpenAI",
	"digitalocean": "DigitalOcean",
	"huggingface":  "HuggingFace",
	"hashicorp":    "HashiCorp",
	"sendgrid":     "SendGrid",
}

// Label returns a readable name for a rule id: each "-"-separated part is
// spelled from a small table of brand names and acronyms or else gets an
// upper-case first letter, and the parts are joined by spaces.
// Label("github-fine-grained-pat") is "GitHub Fine Grained PAT".
func Label(ruleID string) string {
	parts := strings.Split(ruleID, "-")
	for i, p := range parts {
		if w, ok := labelWords[p]; ok {
			parts[i] = w
		} else {
			r, n := utf8.DecodeRuneInString(p)
			if r != utf8.RuneError {
				parts[i] = string(unicode.ToUpper(r)) + p[n:]
			}
		}
	}
	return strings.Join(parts, " ")
}
