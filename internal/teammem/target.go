package teammem

import (
	"context"
	"strings"
	"time"
)

// Targets is the caching decorator over a Store through which the Writer,
// and the server's reads, find the repo and space a request names by repo
// slug: the store's RepoGet and SpaceGet, answered from the store's
// HeadsCache while a head there is fresh. Because writes find their space
// here too, the head a write commits (or reads under the lock without
// moving it) lands in the same cache its next read looks in.
type Targets struct {
	Store    Store
	Scanner  SecretScanner // nil: no slug is refused for a secret
	Defaults ServerDefaults
}

// Find returns the repo and space of p's space of repo slug in scope. A
// repo or space that does not exist yet comes back with ID 0 (a write
// creates them only once it has something to commit). Reads take the head
// from the cache when it is fresh; a write takes it from there only when
// the space exists, since it needs only the ids (which never change):
// SpaceApply reads the head itself under the lock.
//
// ENotFound when the repo does not exist and write is false, or the org
// does not create repos; EInvalid when the slug is no repo's, or holds a
// secret a write would store for good.
func (t Targets) Find(ctx context.Context, p Principal, slug string, scope Scope, write bool) (Target, error) {
	// A slug must be a repo's, checked here whichever dialect brought it:
	// the hidden repo of an API store ("@memstore/…") is reachable only
	// through its store, under that store's own limits. The cache holds
	// stores' heads under their hidden slugs (their writes put them there),
	// which no valid slug starts like; every other slug it holds was
	// validated when it was read from the database below, so a cached head
	// costs no second validation.
	if strings.HasPrefix(slug, "@") {
		return Target{}, SlugError(t.Scanner, p.Org, slug, ValidateRepoSlug(slug))
	}
	cache := t.Store.HeadsCache()
	k, now := SpaceKeyOf(p, slug, scope), time.Now()
	if repo, sp, ok := cache.Head(k, now); ok && (!write || sp.ID != 0) {
		return Target{Repo: repo, Space: sp}, nil
	}
	if err := ValidateRepoSlug(slug); err != nil {
		return Target{}, SlugError(t.Scanner, p.Org, slug, err)
	}
	repo, err := t.Store.RepoGet(ctx, p.Org.ID, slug)
	if err == nil && repo.Store {
		err = Errorf(ENotFound, "repo not found") // unreachable with a valid slug; never a store's
	}
	if ErrorCode(err) == ENotFound {
		// The refusals below name the slug: not one that holds a secret.
		// A write is refused for it, a read finds nothing.
		if serr := RefuseSecret(t.Scanner, p.Org, "repo", slug); serr != nil {
			if !write {
				serr = Errorf(ENotFound, "repo not found")
			}
			return Target{}, serr
		}
	}
	ref := SpaceRef{RepoID: repo.ID, Scope: scope, UserID: k.User}
	switch {
	case ErrorCode(err) == ENotFound && write && p.Org.Limits(t.Defaults).AutoCreateRepos:
		repo = Repo{OrgID: p.Org.ID, Slug: slug}
		ref.RepoID = 0
		return Target{Repo: repo, Space: EmptySpace(ref, repo)}, nil
	case ErrorCode(err) == ENotFound && write:
		return Target{}, Errorf(ENotFound, "repo %q does not exist and the organization does not create repos automatically", slug)
	case ErrorCode(err) == ENotFound:
		return Target{}, Errorf(ENotFound, "repo %q not found", slug)
	case err != nil:
		return Target{}, err
	}
	sp, err := t.Store.SpaceGet(ctx, p.Org.ID, ref)
	if ErrorCode(err) == ENotFound {
		sp, err = EmptySpace(ref, repo), nil
	}
	if err == nil {
		cache.PutHead(k, repo, sp, now)
	}
	return Target{Repo: repo, Space: sp}, err
}

// SlugError is err, the refusal of slug, or the refusal of the secret it
// holds (which err would repeat) as sc finds them.
func SlugError(sc SecretScanner, org Org, slug string, err error) error {
	if serr := RefuseSecret(sc, org, "repo", slug); serr != nil {
		return serr
	}
	return err
}

// EmptySpace is the head of a space that was never written.
func EmptySpace(ref SpaceRef, repo Repo) Space {
	return Space{OrgID: repo.OrgID, RepoID: repo.ID, Scope: ref.Scope, UserID: ref.UserID,
		Checksum: EmptySpaceChecksum, UpdatedAt: repo.CreatedAt}
}

// secretFields spells, for error messages, the fields RefuseSecret checks;
// the error's details name them by these keys.
var secretFields = map[string]string{
	"name":   "the key name",
	"repo":   "the repo slug",
	"client": "the client name (the X-Teammem-Client header, else User-Agent)",
}

// RefuseSecret returns an invalid error when value, something the server
// stores and shows besides entry content (a key name, a repo slug, a client
// name: field is one of "name", "repo", "client"), holds a secret as sc
// finds them for org, and nil otherwise or when sc is nil. The entry scan
// never reads these values, yet they are listed to admins, kept in every
// version's history and written to the audit log, so a token pasted into
// one would be shared as surely as one in an entry. The error names the
// field and the rule, never the value. teammem-server admin create-key
// refuses key names with it too.
func RefuseSecret(sc SecretScanner, org Org, field, value string) error {
	if sc == nil || value == "" {
		return nil
	}
	found := sc.ScanEntry(org, field, NameScanText(value))
	if len(found) == 0 {
		return nil
	}
	f := found[0]
	if f.RuleID == RuleScannerUnavailable {
		// Not the caller's fault, and nothing unscanned is stored either.
		return Errorf(EUnavailable, "the secret scanner is unavailable, so %s cannot be checked", secretFields[field])
	}
	return Errorf(EInvalid, "%s holds what looks like a secret (%s); use one without it", secretFields[field], f.Label).
		WithDetails(map[string]any{"field": field, "rule_id": f.RuleID, "label": f.Label})
}
