package teammem

import (
	"strings"
	"time"
)

// Repo is a code repository whose memory an org keeps, named by the slug the
// client derives from its git remote: "owner/name" for github.com,
// "host/owner/name" for other hosts. Case is preserved.
type Repo struct {
	ID        int64     `json:"-"`
	OrgID     int64     `json:"-"`
	Slug      string    `json:"repo"`
	CreatedAt time.Time `json:"created_at"`
	// Store marks the hidden repo row of a memory store created through
	// the memory stores API: no repository, a slug that is not a valid repo
	// slug (StoreRepoSlug), left out of repo listings.
	Store bool `json:"-"`
}

// MaxRepoSlugLength bounds a repo slug.
const MaxRepoSlugLength = 300

// repoSegment reports whether p is one or more letters, digits, '_', '.'
// and '-' (a segment), or, with host set, letters, digits, '.' and '-'
// followed by an optional port of one to five digits. Every pull checks its
// repo, so these are byte loops rather than regular expressions.
func repoSegment(p string, host bool) bool {
	if host {
		if name, port, ok := strings.Cut(p, ":"); ok {
			if len(port) < 1 || len(port) > 5 || !allBytes(port, isDigit) {
				return false
			}
			p = name
		}
		return p != "" && allBytes(p, func(c byte) bool { return isAlnum(c) || c == '.' || c == '-' })
	}
	return p != "" && allBytes(p, func(c byte) bool { return isAlnum(c) || c == '.' || c == '-' || c == '_' })
}

func allBytes(s string, ok func(byte) bool) bool {
	for i := range len(s) {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// ValidateRepoSlug checks a repo slug: "owner/name" or "host/owner/name",
// segments of letters, digits, '.', '_' and '-' (a host may carry a port),
// never "." or "..".
func ValidateRepoSlug(slug string) error {
	if slug == "" {
		return Errorf(EInvalid, "repo is required (owner/name)")
	}
	if len(slug) > MaxRepoSlugLength {
		return Errorf(EInvalid, "repo is longer than %d bytes", MaxRepoSlugLength)
	}
	parts := strings.Split(slug, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return Errorf(EInvalid, "repo %q must be owner/name or host/owner/name", slug)
	}
	for i, p := range parts {
		if p == "." || p == ".." || !repoSegment(p, len(parts) == 3 && i == 0) {
			return Errorf(EInvalid, "repo %q has an invalid segment %q", slug, p)
		}
	}
	return nil
}
