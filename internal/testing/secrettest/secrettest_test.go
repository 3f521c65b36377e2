package secrettest

import (
	"strings"
	"testing"
)

func TestSamples(t *testing.T) {
	tp, fp := TruePositives(), FalsePositives()
	where := map[string]bool{}
	for _, s := range append(tp, fp...) {
		if placeholder.MatchString(s.Text) || s.RuleID == "" || s.Text == "" {
			t.Errorf("%s: %q", s.Where, s.Text)
		}
		if where[s.Where] {
			t.Errorf("%s: named twice", s.Where)
		}
		where[s.Where] = true
	}
	// Same seeds, same tokens; different samples, different tokens.
	again := TruePositives()
	for i := range tp {
		if again[i] != tp[i] {
			t.Errorf("%s: %q then %q", tp[i].Where, tp[i].Text, again[i].Text)
		}
	}
	if tp[0].Text == tp[1].Text || !strings.Contains(tp[0].Text, "sk-ant-api03-") {
		t.Errorf("first samples %q, %q", tp[0].Text, tp[1].Text)
	}
}

func TestToken(t *testing.T) {
	seen := map[string]bool{}
	for _, tmpl := range tokens {
		tok := Token(tmpl.ruleID)
		if tok == "" || placeholder.MatchString(tok) || seen[tok] || tok != Token(tmpl.ruleID) {
			t.Errorf("Token(%s) = %q", tmpl.ruleID, tok)
		}
		seen[tok] = true
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic for a rule without a token template")
		}
	}()
	Token("no-such-rule")
}

func TestExpandUnknownAlphabet(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for an unknown alphabet")
		}
	}()
	expand("x", []template{{"rule", "{nope:3}"}})
}
