package main_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// TestAdminCreateOrgAtomic: create-org makes the org, its owner and one key
// together, audits the key, and a second create-org of the same slug fails
// leaving no extra user or key behind.
func TestAdminCreateOrgAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dsn := "sqlite://" + filepath.Join(dir, "teammem.db")
	out, errOut, ok := runIn(t, dir, dsn, "admin", "create-org", "--slug", "beta", "--create")
	if !ok || !strings.HasPrefix(out, "created org \"beta\" with owner \"admin\"; key (shown once):\ntmk_") {
		t.Fatalf("create-org:\n%s%s", out, errOut)
	}
	key := strings.TrimSpace(strings.TrimPrefix(out, "created org \"beta\" with owner \"admin\"; key (shown once):\n"))
	out, errOut, ok = runIn(t, dir, dsn, "admin", "create-org", "--slug", "beta", "--name", "Again")
	if ok || out != "" || !strings.HasSuffix(errOut, "teammem-server: org \"beta\" already exists\n") {
		t.Fatalf("second create-org: ok=%v\n%s%s", ok, out, errOut)
	}

	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "teammem.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := db.KeyLookup(ctx, teammem.HashKey(key))
	if err != nil || p.Org.Slug != "beta" || p.Org.Name != "beta" || p.User.Handle != "admin" || p.User.Role != teammem.RoleOwner || p.Key.Name != "owner" {
		t.Fatalf("the printed key = %+v, %v; want beta's owner admin", p, err)
	}
	users, err := db.UserList(ctx, p.Org.ID)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := db.KeyList(ctx, p.Org.ID, teammem.KeyFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 1 || len(keys) != 1 {
		t.Errorf("beta has %d users and %d keys, want 1 and 1", len(users), len(keys))
	}
	events, err := db.AuditList(ctx, p.Org.ID, teammem.AuditFilter{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].Action != "key.create" || events[0].Target != p.Key.ID ||
		events[0].Details["user"] != "admin" || events[0].Details["via"] != "teammem-server admin" {
		t.Errorf("audit = %+v, want one key.create of the owner's key", events)
	}
}
