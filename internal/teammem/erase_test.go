package teammem

import (
	"strings"
	"testing"
)

func TestEraseProposal(t *testing.T) {
	secret, other := "leaked\n", "kept\n"
	p := Proposal{ID: 7, Changes: []ProposedChange{
		{Key: "a.md", Op: OpWrite, Content: secret},
		{Key: "b.md", Op: OpWrite, Content: secret},
		{Key: "a.md", Op: OpDelete, Base: "sha256:00"},
		{Key: "c.md", Op: OpWrite, Content: other},
	}, Findings: []PoisonFinding{{Path: "a.md", RuleID: "r", Excerpt: "leaked"}, {Path: "c.md", RuleID: "r", Excerpt: "kept"}}}
	tests := []struct {
		name     string
		e        ProposalErasure
		redacted []bool // per change
	}{
		{"one version: its key and content only", ProposalErasure{Key: "a.md", Checksum: EntryChecksum(secret)}, []bool{true, false, false, false}},
		{"other content of the key", ProposalErasure{Key: "c.md", Checksum: EntryChecksum(secret)}, []bool{false, false, false, false}},
		{"a whole space", ProposalErasure{}, []bool{true, true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := EraseProposal(p, tt.e)
			any := false
			for i, c := range got.Changes {
				if c.Redacted != tt.redacted[i] || (c.Redacted && c.Content != "") {
					t.Errorf("change %d = %+v, want redacted %v", i, c, tt.redacted[i])
				}
				if !c.Redacted && c.Content != p.Changes[i].Content {
					t.Errorf("change %d lost its content: %+v", i, c)
				}
				any = any || c.Redacted
			}
			if changed != any || got.Redacted != any {
				t.Errorf("changed %v, Redacted %v, want %v", changed, got.Redacted, any)
			}
			for _, f := range got.Findings {
				if f.Excerpt != "" && f.Path == "a.md" && tt.redacted[0] {
					t.Errorf("finding on an erased entry keeps its excerpt: %+v", f)
				}
			}
			if p.Changes[0].Content != secret || p.Findings[0].Excerpt == "" {
				t.Fatal("EraseProposal changed its argument")
			}
			if err := checkApproval(&got); (err != nil) != any || (err != nil && ErrorCode(err) != EGone) {
				t.Errorf("approval check = %v", err)
			}
		})
	}
}

func TestProposalErasureLikePattern(t *testing.T) {
	for key, want := range map[string]string{
		"":           "%",
		"a.md":       `%"a.md"%`,
		"100%_x.md":  `%"100\%\_x.md"%`,
		`back\s.md`:  `%"back\\\\s.md"%`,
		"a&b<c>.md":  `%"a\\u0026b\\u003cc\\u003e.md"%`,
		`quote".md`:  `%"quote\\".md"%`,
		"notes/x.md": `%"notes/x.md"%`,
	} {
		if got := (ProposalErasure{Key: key}).LikePattern(); got != want {
			t.Errorf("LikePattern(%q) = %s, want %s", key, got, want)
		}
	}
	if !strings.Contains(jsonString("a&b"), `\u0026`) {
		t.Fatal("keys are stored as encoding/json writes them, HTML-escaped")
	}
}
