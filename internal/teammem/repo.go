package teammem

import (
	"regexp"
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

var (
	repoSegmentRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	repoHostRE    = regexp.MustCompile(`^[A-Za-z0-9.-]+(?::[0-9]{1,5})?$`)
)

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
		re := repoSegmentRE
		if len(parts) == 3 && i == 0 {
			re = repoHostRE
		}
		if p == "." || p == ".." || !re.MatchString(p) {
			return Errorf(EInvalid, "repo %q has an invalid segment %q", slug, p)
		}
	}
	return nil
}
