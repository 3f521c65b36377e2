package teammem

import (
	"regexp"
	"strings"
	"testing"
)

func TestValidateRepoSlug(t *testing.T) {
	for _, slug := range []string{"acme/app", "Acme/my_app.v2-x", "gitlab.example.com/team/app",
		"git.example.com:8443/team/app", "h:1/o/n", "a/b", "o/..name", "o/.hidden"} {
		if err := ValidateRepoSlug(slug); err != nil {
			t.Errorf("ValidateRepoSlug(%q) = %v, want nil", slug, err)
		}
	}
	for _, slug := range []string{"", "acme", "a/b/c/d", "acme/", "/app", "acme/.", "acme/..", "../app",
		"acme/app name", "acme/app\n", "host_x/o/n", "host:/o/n", "host:123456/o/n", "host:8a/o/n",
		":80/o/n", "host:80:81/o/n", "acme/ápp", "acme/app:1", "a/" + strings.Repeat("x", MaxRepoSlugLength)} {
		if err := ValidateRepoSlug(slug); ErrorCode(err) != EInvalid {
			t.Errorf("ValidateRepoSlug(%q) = %v, want an invalid error", slug, err)
		}
	}
}

// TestRepoSegmentMatchesItsGrammar checks the byte loops against the
// grammar they implement, written as regular expressions, over every
// string of up to three bytes from an alphabet of each class's edges.
func TestRepoSegmentMatchesItsGrammar(t *testing.T) {
	segment := regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	host := regexp.MustCompile(`^[A-Za-z0-9.-]+(?::[0-9]{1,5})?$`)
	alphabet := []string{"a", "Z", "0", "9", "_", ".", "-", ":", "/", " ", "\n", "é", "@", "`", "{", "[", "\x00"}
	var all []string
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		all = append(all, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			grow(prefix+c, n-1)
		}
	}
	grow("", 3)
	all = append(all, "h:1", "h:12345", "h:123456", "a.b-c:0", "h:", ":1")
	for _, s := range all {
		if got, want := repoSegment(s, false), segment.MatchString(s); got != want {
			t.Errorf("repoSegment(%q, segment) = %v, the grammar says %v", s, got, want)
		}
		if got, want := repoSegment(s, true), host.MatchString(s); got != want {
			t.Errorf("repoSegment(%q, host) = %v, the grammar says %v", s, got, want)
		}
	}
}
