package teammem

import (
	"fmt"
	"testing"
)

func TestReasons(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Reasons() {
		name := r.String()
		if r == ReasonNone || seen[name] || name == fmt.Sprintf("Reason(%d)", r) {
			t.Errorf("reason %d named %q", r, name)
		}
		seen[name] = true
	}
	if len(reasonNames) != int(reasonEnd) {
		t.Errorf("%d names for %d reasons", len(reasonNames), reasonEnd)
	}
	err := fmt.Errorf("wrapped: %w", TooManyEntries(1, 2))
	if ErrorReason(err) != ReasonTooManyEntries || ErrorReason(nil) != ReasonNone || ErrorReason(fmt.Errorf("x")) != ReasonNone {
		t.Fatalf("ErrorReason(%v) = %v", err, ErrorReason(err))
	}
	// A refusal cleared of a secret keeps its reason.
	if e := TooManyEntries(1, 2).WithDetails(map[string]any{"x": 1}); e.Reason != ReasonTooManyEntries {
		t.Fatalf("WithDetails dropped the reason: %v", e.Reason)
	}
}
