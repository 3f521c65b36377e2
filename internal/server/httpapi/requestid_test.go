package httpapi

import (
	"regexp"
	"strings"
	"testing"
)

// TestValidRequestIDMatchesItsGrammar checks the byte loop against the
// grammar of ids the server echoes, written as a regular expression.
func TestValidRequestIDMatchesItsGrammar(t *testing.T) {
	grammar := regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
	ids := []string{"", "a", "Z9", "req-1.2_3", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"a b", "a\n", "a/b", "a:b", "é", "a\x00", "`", "{", "[", "@", "id\r\nX-Evil: 1"}
	for _, id := range ids {
		if got, want := validRequestID(id), grammar.MatchString(id); got != want {
			t.Errorf("validRequestID(%q) = %v, the grammar says %v", id, got, want)
		}
	}
}
