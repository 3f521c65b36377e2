package teammem

import "encoding/json"

// Poisoning checks (issue 15 point 4): team memory is loaded into every
// teammate's agent, so a team write is checked for text that tries to steer
// the agent. The heuristics live in internal/server/poison; this file holds what the
// write path needs of them.

// PoisonFinding is one heuristic hit in an entry: the rule, its label, the
// 1-based line and, when it is safe to show, a short excerpt of the text
// that matched. An excerpt never holds a secret: rules whose match may
// carry data (encoded blobs, URL query values) give none.
type PoisonFinding struct {
	Path    string `json:"path"`
	RuleID  string `json:"ruleId"`
	Label   string `json:"label"`
	Line    int    `json:"line"`
	Excerpt string `json:"excerpt,omitempty"`
}

// PoisonChecker runs the poisoning heuristics on one entry's content.
type PoisonChecker interface {
	CheckEntry(key, content string) []PoisonFinding
}

// PoisoningPolicy says what a team write with poisoning findings does.
type PoisoningPolicy string

// The poisoning policies.
const (
	PoisoningFlag   PoisoningPolicy = "flag"   // store the write with its findings (the default)
	PoisoningReview PoisoningPolicy = "review" // hold the write as a proposal for an admin
	PoisoningReject PoisoningPolicy = "reject" // refuse the whole write
)

// Valid reports whether p is a known policy.
func (p PoisoningPolicy) Valid() bool {
	return p == PoisoningFlag || p == PoisoningReview || p == PoisoningReject
}

// PoisonRejected is the refusal of a write under poisoning: reject. It is
// EInvalid (a 400, like any content the server will not take) with
// ReasonPoisoningDetected and the findings in the details; the secret
// policy's refusal has its own code because Claude Code parses it.
func PoisonRejected(found []PoisonFinding) *Error {
	paths := map[string]bool{}
	for _, f := range found {
		paths[f.Path] = true
	}
	return Errorf(EInvalid, "%d entries look like instructions aimed at the agent or hidden data (poisoning checks); nothing was written", len(paths)).
		WithReason(ReasonPoisoningDetected).WithDetails(map[string]any{"findings": found})
}

// PoisonRuleIDs lists the distinct rule ids of findings, in order of appearance.
func PoisonRuleIDs(found []PoisonFinding) []string {
	seen := map[string]bool{}
	ids := []string{}
	for _, f := range found {
		if !seen[f.RuleID] {
			seen[f.RuleID] = true
			ids = append(ids, f.RuleID)
		}
	}
	return ids
}

// TeamWritesPolicy says whether members' team writes apply directly or
// wait for an admin (review before sharing, issue 15 point 3).
type TeamWritesPolicy string

// The team write policies.
const (
	TeamWritesDirect TeamWritesPolicy = "direct" // writes apply at once (the default)
	TeamWritesReview TeamWritesPolicy = "review" // members' writes become proposals
)

// Valid reports whether p is a known policy.
func (p TeamWritesPolicy) Valid() bool { return p == TeamWritesDirect || p == TeamWritesReview }

// EncodeFindings is findings as a version stores them: a JSON array, ""
// when there are none.
func EncodeFindings(found []PoisonFinding) string {
	if len(found) == 0 {
		return ""
	}
	b, err := json.Marshal(found)
	if err != nil {
		return "" // plain strings and ints always marshal
	}
	return string(b)
}

// DecodeFindings reads what EncodeFindings stored; nil for "" or anything
// unreadable (a finding is advice, never worth failing a history read).
func DecodeFindings(s string) []PoisonFinding {
	if s == "" {
		return nil
	}
	var out []PoisonFinding
	if json.Unmarshal([]byte(s), &out) != nil {
		return nil
	}
	return out
}
