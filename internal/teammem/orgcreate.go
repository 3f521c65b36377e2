package teammem

import "context"

// OwnerHandle is the handle of the owner every new org starts with, whether
// bootstrap, a server operator's POST /v1/admin/orgs or
// `teammem-server admin create-org` made it.
const OwnerHandle = "admin"

// NewOrg describes an org for CreateOrgWithOwner.
type NewOrg struct {
	Slug string
	Name string // "" names the org after its slug
	// KeyName names the owner's key ("owner", "bootstrap").
	KeyName string
	// Key is the owner's API key when the caller chose it (bootstrap's
	// TEAMMEM_BOOTSTRAP_KEY); "" makes a new one.
	Key string
}

// CreateOrgWithOwner creates an org with its owner OwnerHandle and the
// owner's key, and returns the org and the key, which only the caller ever
// sees. The three rows commit in one transaction: an org without a way in,
// or a second user or key beside an org that failed, cannot be left behind.
// It returns EInvalid for a bad slug and EConflict ("org … already
// exists") when the slug is taken.
func CreateOrgWithOwner(ctx context.Context, st Store, n NewOrg) (Org, string, error) {
	if err := ValidateOrgSlug(n.Slug); err != nil {
		return Org{}, "", err
	}
	name := n.Name
	if name == "" {
		name = n.Slug
	}
	key, prefix := n.Key, KeyPrefix(n.Key)
	if key == "" {
		key, prefix = NewKeyString()
	}
	org, err := st.OrgCreate(ctx, OrgCreateParams{Slug: n.Slug, Name: name,
		Owner: &OrgOwner{Handle: OwnerHandle, KeyName: n.KeyName, KeyPrefix: prefix, KeyHash: HashKey(key)}})
	if ErrorCode(err) == EConflict {
		return Org{}, "", Errorf(EConflict, "org %q already exists", n.Slug)
	}
	if err != nil {
		return Org{}, "", err
	}
	return org, key, nil
}
