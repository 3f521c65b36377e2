package teammem_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// TestCreateOrgWithOwner: the org, its owner and the owner's key arrive
// together; a taken slug or a bad one leaves nothing behind.
func TestCreateOrgWithOwner(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	org, key, err := teammem.CreateOrgWithOwner(ctx, db, teammem.NewOrg{Slug: "acme", KeyName: "owner"})
	if err != nil {
		t.Fatal(err)
	}
	if org.Slug != "acme" || org.Name != "acme" {
		t.Errorf("org = %+v, want slug and name acme", org)
	}
	p, err := db.KeyLookup(ctx, teammem.HashKey(key))
	if err != nil {
		t.Fatalf("the returned key does not open the org: %v", err)
	}
	if p.Org.ID != org.ID || p.User.Handle != teammem.OwnerHandle || p.User.Role != teammem.RoleOwner || p.Key.Name != "owner" || p.Key.ReadOnly {
		t.Errorf("principal = %+v", p)
	}

	_, _, err = teammem.CreateOrgWithOwner(ctx, db, teammem.NewOrg{Slug: "acme", Name: "Again", KeyName: "owner"})
	if teammem.ErrorCode(err) != teammem.EConflict || teammem.ErrorMessage(err) != `org "acme" already exists` {
		t.Fatalf("second create = %v, want conflict", err)
	}
	_, _, err = teammem.CreateOrgWithOwner(ctx, db, teammem.NewOrg{Slug: "Not A Slug", KeyName: "owner"})
	if teammem.ErrorCode(err) != teammem.EInvalid {
		t.Fatalf("bad slug = %v, want invalid", err)
	}
	users, err := db.UserList(ctx, org.ID)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := db.KeyList(ctx, org.ID, teammem.KeyFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 1 || len(keys) != 1 {
		t.Errorf("after the failed creates: %d users and %d keys, want 1 and 1", len(users), len(keys))
	}
	if n, err := db.OrgCount(ctx); err != nil || n != 1 {
		t.Errorf("org count = %d, %v; want 1", n, err)
	}
}

// TestCreateOrgWithOwnerGivenKey: a key the caller chose (bootstrap's) is
// the owner's key, under the name the caller gave it.
func TestCreateOrgWithOwnerGivenKey(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	given, _ := teammem.NewKeyString()
	org, key, err := teammem.CreateOrgWithOwner(ctx, db, teammem.NewOrg{Slug: "default", Name: "Default", KeyName: "bootstrap", Key: given})
	if err != nil {
		t.Fatal(err)
	}
	if key != given || org.Name != "Default" {
		t.Fatalf("key %q, org %+v; want the given key and name", key, org)
	}
	p, err := db.KeyLookup(ctx, teammem.HashKey(given))
	if err != nil || p.Key.Name != "bootstrap" || p.Key.Prefix != teammem.KeyPrefix(given) {
		t.Fatalf("lookup = %+v, %v", p, err)
	}
}
