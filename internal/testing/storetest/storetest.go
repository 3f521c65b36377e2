// Package storetest is the one conformance suite every teammem.Store driver
// must pass. A driver's test calls Run with a function that opens a fresh,
// empty, migrated store for each subtest.
package storetest

import (
	"context"
	"fmt"
	"maps"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// Opener returns a fresh, empty, migrated store; it registers its own cleanup.
type Opener func(t *testing.T) teammem.Store

// Run runs the whole suite against the driver opened by open.
func Run(t *testing.T, open Opener) {
	tests := map[string]func(t *testing.T, b *bundle){
		"Orgs":                testOrgs,
		"Users":               testUsers,
		"LastOwner":           testLastOwner,
		"OrgWithOwner":        testOrgWithOwner,
		"Keys":                testKeys,
		"KeyCap":              testKeyCap,
		"KeyCapConcurrent":    testKeyCapConcurrent,
		"Repos":               testRepos,
		"Spaces":              testSpaces,
		"ApplyWrites":         testApplyWrites,
		"ApplyNoop":           testApplyNoop,
		"ApplyError":          testApplyError,
		"Tombstones":          testTombstones,
		"Changes":             testChanges,
		"ChangesOverlap":      testChangesOverlap,
		"History":             testHistory,
		"Purge":               testPurge,
		"Audit":               testAudit,
		"TenantIsolation":     testTenantIsolation,
		"ConcurrentApply":     testConcurrentApply,
		"EarlyApply":          testEarlyApply,
		"ConcurrentEarly":     testConcurrentEarlyApply,
		"PlanThroughApply":    testPlanThroughApply,
		"PersonalSpacesSplit": testPersonalSpacesSplit,
		"OrgEditConcurrent":   testOrgEditConcurrent,
		"AuditInTransaction":  testAuditInTransaction,
		"VersionsPurgeByAge":  testVersionsPurgeByAge,
		"VersionsPurgeCount":  testVersionsPurgeByCount,
		"VersionRedact":       testVersionRedact,
		"SpaceVersionsPurge":  testSpaceVersionsPurge,
		"ScrubsResume":        testScrubsResume,
		"MemoryIDs":           testMemoryIDs,
		"MemoryCreatedAt":     testMemoryCreatedAt,
		"MemoryStoreUpdated":  testMemoryStoreUpdatedAt,
		"MemoryStores":        testMemoryStores,
		"StoreCap":            testStoreCap,
		"StoreCapConcurrent":  testStoreCapConcurrent,
		"ConsoleSessions":     testConsoleSessions,
		"KeysWithPrefix":      testKeysWithPrefix,
		"ConsoleOverview":     testConsoleOverview,
		"VersionFindings":     testVersionFindings,
		"Proposals":           testProposals,
		"WriteFairness":       testWriteFairness,
		"ArchiveOrdersWrites": testArchiveOrdersWrites,
		"RedactProposals":     testRedactErasesProposals,
		"PurgeProposals":      testPurgeErasesProposals,
		"PurgeSessionNotes":   testPurgeErasesSessionNotes,
		"Dreams":              testDreams,
		"DreamLifecycle":      testDreamLifecycle,
		"DreamList":           testDreamList,
		"DreamsAcross":        testDreamsAcross,
		"DreamStartRace":      testDreamStartConcurrent,
		"Sessions":            testSessions,
		"Search":              testSearch,
		"SearchCandidates":    testSearchCandidates,
	}
	names := make([]string, 0, len(tests))
	for n := range tests {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		fn := tests[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, setup(t, open))
		})
	}
}

// bundle is what every test starts from: a store with one org, an owner and
// a member.
type bundle struct {
	ctx    context.Context
	store  teammem.Store
	org    teammem.Org
	owner  teammem.User
	member teammem.User
}

func setup(t *testing.T, open Opener) *bundle {
	t.Helper()
	ctx := context.Background()
	s := open(t)
	org := must[teammem.Org](t)(s.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme"}))
	owner := must[teammem.User](t)(s.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "alice", Role: teammem.RoleOwner}))
	member := must[teammem.User](t)(s.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "bob", Role: teammem.RoleMember}))
	return &bundle{ctx: ctx, store: s, org: org, owner: owner, member: member}
}

// must returns a helper that fails the test on error and returns the value.
func must[T any](t *testing.T) func(v T, err error) T {
	t.Helper()
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := teammem.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// space returns the team space of a fresh repo.
func (b *bundle) space(t *testing.T, slug string) teammem.Space {
	t.Helper()
	repo := must[teammem.Repo](t)(b.store.RepoEnsure(b.ctx, b.org.ID, slug))
	return must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam}))
}

// apply commits changes unconditionally.
func (b *bundle) apply(t *testing.T, sp teammem.Space, changes ...teammem.EntryChange) teammem.Space {
	t.Helper()
	return must[teammem.Space](t)(teammem.SpaceApply(b.ctx, b.store, b.org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: b.owner.ID, ClientID: "test"}, Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
		return changes, nil
	}}))
}

func write(key, content string) teammem.EntryChange {
	return teammem.EntryChange{Key: key, Op: teammem.OpWrite, Content: content}
}

func del(key string) teammem.EntryChange { return teammem.EntryChange{Key: key, Op: teammem.OpDelete} }

// checkHead verifies the space head against its live entries.
func (b *bundle) checkHead(t *testing.T, sp teammem.Space) {
	t.Helper()
	entries := must[[]teammem.Entry](t)(b.store.EntriesList(b.ctx, b.org.ID, sp.ID, true))
	sums := map[string]string{}
	var bytes int64
	for _, e := range entries {
		if e.Checksum != teammem.EntryChecksum(e.Content) {
			t.Errorf("entry %q checksum %s does not match its content", e.Key, e.Checksum)
		}
		sums[e.Key] = e.Checksum
		bytes += int64(len(e.Content))
	}
	if want := teammem.SpaceChecksum(sums); sp.Checksum != want {
		t.Errorf("space checksum = %s, recomputed %s", sp.Checksum, want)
	}
	if sp.EntryCount != len(entries) || sp.TotalBytes != bytes {
		t.Errorf("space count/bytes = %d/%d, entries say %d/%d", sp.EntryCount, sp.TotalBytes, len(entries), bytes)
	}
}

func testOrgs(t *testing.T, b *bundle) {
	_, err := b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "acme", Name: "again"})
	wantCode(t, err, teammem.EConflict)
	got := must[teammem.Org](t)(b.store.OrgGetBySlug(b.ctx, "acme"))
	if got.ID != b.org.ID || got.Name != "Acme" {
		t.Fatalf("OrgGetBySlug = %+v", got)
	}
	_, err = b.store.OrgGetBySlug(b.ctx, "nope")
	wantCode(t, err, teammem.ENotFound)
	no := false
	settings := teammem.OrgSettings{MaxEntries: 7, SecretPolicy: teammem.SecretPolicyReject, AutoCreateRepos: &no,
		SecretAllowlist: teammem.Allowlist{RuleIDs: []string{"github-pat"}, Regexes: []string{"^test"}}}
	name := "Acme Inc"
	up := must[teammem.Org](t)(b.store.OrgUpdate(b.ctx, b.org.ID, teammem.OrgUpdateParams{Name: &name, Settings: &settings}))
	if up.Name != name || up.Settings.MaxEntries != 7 || up.Settings.AutoCreateRepos == nil || *up.Settings.AutoCreateRepos ||
		len(up.Settings.SecretAllowlist.RuleIDs) != 1 {
		t.Fatalf("OrgUpdate = %+v", up)
	}
	disabled := true
	up = must[teammem.Org](t)(b.store.OrgUpdate(b.ctx, b.org.ID, teammem.OrgUpdateParams{Disabled: &disabled}))
	if !up.Disabled || up.Name != name {
		t.Fatalf("OrgUpdate disabled = %+v", up)
	}
	_, err = b.store.OrgUpdate(b.ctx, 999999, teammem.OrgUpdateParams{Disabled: &disabled})
	wantCode(t, err, teammem.ENotFound)
	if n := must[int](t)(b.store.OrgCount(b.ctx)); n != 1 {
		t.Fatalf("OrgCount = %d", n)
	}
	must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "beta", Name: "Beta"}))
	if list := must[[]teammem.Org](t)(b.store.OrgList(b.ctx)); len(list) != 2 || list[0].Slug != "acme" {
		t.Fatalf("OrgList = %+v", list)
	}
}

func testUsers(t *testing.T, b *bundle) {
	_, err := b.store.UserCreate(b.ctx, b.org.ID, teammem.UserCreateParams{Handle: "alice", Role: teammem.RoleViewer})
	wantCode(t, err, teammem.EConflict)
	got := must[teammem.User](t)(b.store.UserGetByHandle(b.ctx, b.org.ID, "bob"))
	if got.ID != b.member.ID || got.Role != teammem.RoleMember {
		t.Fatalf("UserGetByHandle = %+v", got)
	}
	role := teammem.RoleAdmin
	yes := true
	up := must[teammem.User](t)(b.store.UserUpdate(b.ctx, b.org.ID, b.member.ID, teammem.UserUpdateParams{Role: &role, Disabled: &yes}))
	if up.Role != teammem.RoleAdmin || !up.Disabled {
		t.Fatalf("UserUpdate = %+v", up)
	}
	if list := must[[]teammem.User](t)(b.store.UserList(b.ctx, b.org.ID)); len(list) != 2 || list[0].Handle != "alice" {
		t.Fatalf("UserList = %+v", list)
	}
	_, err = b.store.UserGet(b.ctx, b.org.ID, 999999)
	wantCode(t, err, teammem.ENotFound)
}

// testOrgWithOwner creates an org with its owner and key at once, and
// checks that a failure half way leaves nothing behind.
func testOrgWithOwner(t *testing.T, b *bundle) {
	hash := teammem.HashKey("tm_first_owner_key_0123456789abcdef")
	org := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "beta", Name: "Beta",
		Owner: &teammem.OrgOwner{Handle: "root", KeyName: "owner", KeyPrefix: "tm_first", KeyHash: hash}}))
	p := must[teammem.Principal](t)(b.store.KeyLookup(b.ctx, hash))
	if p.Org.ID != org.ID || p.User.Handle != "root" || p.User.Role != teammem.RoleOwner || p.Key.Name != "owner" {
		t.Fatalf("the new org's key resolves to %+v", p)
	}
	// The same key hash again: the key insert fails after the org and user
	// inserts, and neither may stay.
	_, err := b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "gamma", Name: "Gamma",
		Owner: &teammem.OrgOwner{Handle: "root", KeyName: "owner", KeyPrefix: "tm_first", KeyHash: hash}})
	if err == nil {
		t.Fatal("an org whose owner key already exists was created")
	}
	_, err = b.store.OrgGetBySlug(b.ctx, "gamma")
	wantCode(t, err, teammem.ENotFound)
	if n := must[int](t)(b.store.OrgCount(b.ctx)); n != 2 {
		t.Fatalf("OrgCount = %d after a failed create, want 2", n)
	}
}

// testLastOwner demotes two owners at once, again and again: with
// KeepOwner exactly one demotion may win, and the org keeps an owner.
func testLastOwner(t *testing.T, b *bundle) {
	member := teammem.RoleMember
	owner := teammem.RoleOwner
	second := must[teammem.User](t)(b.store.UserCreate(b.ctx, b.org.ID, teammem.UserCreateParams{Handle: "carol", Role: teammem.RoleOwner}))
	for round := range 10 {
		ids := []int64{b.owner.ID, second.ID}
		errs := make([]error, len(ids))
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() {
				_, errs[i] = b.store.UserUpdate(b.ctx, b.org.ID, id, teammem.UserUpdateParams{Role: &member, KeepOwner: true})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch teammem.ErrorCode(err) {
			case "":
				won++
			case teammem.EConflict:
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d of 2 concurrent demotions of the last two owners succeeded", round, won)
		}
		for _, id := range ids { // both owners again for the next round
			must[teammem.User](t)(b.store.UserUpdate(b.ctx, b.org.ID, id, teammem.UserUpdateParams{Role: &owner}))
		}
	}
	// Disabling counts too.
	yes := true
	must[teammem.User](t)(b.store.UserUpdate(b.ctx, b.org.ID, second.ID, teammem.UserUpdateParams{Disabled: &yes, KeepOwner: true}))
	_, err := b.store.UserUpdate(b.ctx, b.org.ID, b.owner.ID, teammem.UserUpdateParams{Disabled: &yes, KeepOwner: true})
	wantCode(t, err, teammem.EConflict)
	if u := must[teammem.User](t)(b.store.UserGet(b.ctx, b.org.ID, b.owner.ID)); u.Disabled || u.Role != teammem.RoleOwner {
		t.Fatalf("a refused change was stored: %+v", u)
	}
}

func testKeys(t *testing.T, b *bundle) {
	key, prefix := teammem.NewKeyString()
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	k := must[teammem.APIKey](t)(b.store.KeyCreate(b.ctx, b.org.ID, teammem.KeyCreateParams{
		UserID: b.member.ID, Name: "laptop", Prefix: prefix, Hash: teammem.HashKey(key), ReadOnly: true, ExpiresAt: &exp}))
	if k.ID == "" || k.Prefix != prefix || !k.ReadOnly || k.UserHandle != "bob" || k.ExpiresAt == nil || !k.ExpiresAt.Equal(exp) {
		t.Fatalf("KeyCreate = %+v", k)
	}
	p := must[teammem.Principal](t)(b.store.KeyLookup(b.ctx, teammem.HashKey(key)))
	if p.Org.ID != b.org.ID || p.Org.Slug != "acme" || p.User.ID != b.member.ID || p.User.Role != teammem.RoleMember || p.Key.ID != k.ID {
		t.Fatalf("KeyLookup = %+v", p)
	}
	_, err := b.store.KeyLookup(b.ctx, teammem.HashKey(key+"x"))
	wantCode(t, err, teammem.ENotFound)
	_, err = b.store.KeyCreate(b.ctx, b.org.ID, teammem.KeyCreateParams{UserID: b.owner.ID, Name: "dup", Prefix: prefix, Hash: teammem.HashKey(key)})
	wantCode(t, err, teammem.EConflict)

	at := time.Now().UTC().Truncate(time.Second)
	must[map[string]bool](t)(map[string]bool{}, b.store.KeysTouch(b.ctx, map[string]time.Time{k.ID: at}))
	r := must[teammem.APIKey](t)(b.store.KeyRevoke(b.ctx, b.org.ID, k.ID, at))
	if r.RevokedAt == nil || r.LastUsedAt == nil || !r.LastUsedAt.Equal(at) {
		t.Fatalf("KeyRevoke = %+v", r)
	}
	_, err = b.store.KeyRevoke(b.ctx, b.org.ID, "00000000-0000-0000-0000-000000000000", at)
	wantCode(t, err, teammem.ENotFound)
	key2, prefix2 := teammem.NewKeyString()
	must[teammem.APIKey](t)(b.store.KeyCreate(b.ctx, b.org.ID, teammem.KeyCreateParams{UserID: b.owner.ID, Name: "ci", Prefix: prefix2, Hash: teammem.HashKey(key2)}))
	if list := must[[]teammem.APIKey](t)(b.store.KeyList(b.ctx, b.org.ID, teammem.KeyFilter{})); len(list) != 2 {
		t.Fatalf("KeyList = %+v", list)
	}
	if list := must[[]teammem.APIKey](t)(b.store.KeyList(b.ctx, b.org.ID, teammem.KeyFilter{UserID: b.owner.ID})); len(list) != 1 || list[0].Name != "ci" {
		t.Fatalf("KeyList(owner) = %+v", list)
	}
	// A key cannot be created for a user of another org.
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"}))
	key3, prefix3 := teammem.NewKeyString()
	_, err = b.store.KeyCreate(b.ctx, other.ID, teammem.KeyCreateParams{UserID: b.owner.ID, Name: "x", Prefix: prefix3, Hash: teammem.HashKey(key3)})
	wantCode(t, err, teammem.ENotFound)
}

func testRepos(t *testing.T, b *bundle) {
	r1 := must[teammem.Repo](t)(b.store.RepoEnsure(b.ctx, b.org.ID, "Owner/Name"))
	r2 := must[teammem.Repo](t)(b.store.RepoEnsure(b.ctx, b.org.ID, "Owner/Name"))
	if r1.ID != r2.ID || r1.Slug != "Owner/Name" {
		t.Fatalf("RepoEnsure twice = %+v, %+v", r1, r2)
	}
	_, err := b.store.RepoGet(b.ctx, b.org.ID, "owner/name")
	wantCode(t, err, teammem.ENotFound) // case preserved and significant
	sp := b.space(t, "gitlab.example.com/a/b")
	b.apply(t, sp, write("a.md", "hello"))
	list := must[[]teammem.RepoSummary](t)(b.store.RepoList(b.ctx, b.org.ID))
	if len(list) != 2 {
		t.Fatalf("RepoList = %+v", list)
	}
	for _, r := range list {
		switch r.Slug {
		case "Owner/Name":
			if r.Team.EntryCount != 0 || r.Team.Checksum != teammem.EmptySpaceChecksum {
				t.Errorf("empty repo summary = %+v", r)
			}
		case "gitlab.example.com/a/b":
			if r.Team.EntryCount != 1 || r.Team.TotalBytes != 5 || r.Team.Version != 1 {
				t.Errorf("repo summary = %+v", r)
			}
		}
	}
}

func testSpaces(t *testing.T, b *bundle) {
	repo := must[teammem.Repo](t)(b.store.RepoEnsure(b.ctx, b.org.ID, "o/r"))
	ref := teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam}
	_, err := b.store.SpaceGet(b.ctx, b.org.ID, ref)
	wantCode(t, err, teammem.ENotFound)
	s1 := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, ref))
	s2 := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, ref))
	if s1.ID != s2.ID || s1.Version != 0 || s1.Checksum != teammem.EmptySpaceChecksum || s1.Scope != teammem.ScopeTeam {
		t.Fatalf("SpaceEnsure = %+v, %+v", s1, s2)
	}
	p := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: b.member.ID}))
	if p.ID == s1.ID || p.UserID != b.member.ID {
		t.Fatalf("personal space = %+v", p)
	}
	if all := must[[]teammem.Space](t)(b.store.SpaceList(b.ctx)); len(all) != 2 || all[0].ID != s1.ID {
		t.Fatalf("SpaceList = %+v", all)
	}
	// Every space has its own uid, kept by every later read and write.
	if len(s1.UID) != 32 || s1.UID != s2.UID || p.UID == s1.UID || len(p.UID) != 32 {
		t.Fatalf("space uids %q, %q, personal %q", s1.UID, s2.UID, p.UID)
	}
	if w := b.apply(t, s1, write("a.md", "a")); w.UID != s1.UID {
		t.Fatalf("a write changed the uid: %q → %q", s1.UID, w.UID)
	}
	if got := must[teammem.Space](t)(b.store.SpaceGet(b.ctx, b.org.ID, ref)); got.UID != s1.UID {
		t.Fatalf("SpaceGet uid %q, want %q", got.UID, s1.UID)
	}
	// A personal space of another org's user cannot be created.
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"}))
	stranger := must[teammem.User](t)(b.store.UserCreate(b.ctx, other.ID, teammem.UserCreateParams{Handle: "eve", Role: teammem.RoleOwner}))
	_, err = b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: stranger.ID})
	wantCode(t, err, teammem.ENotFound)
	// Referencing a missing org is not_found on every driver.
	_, err = b.store.RepoEnsure(b.ctx, 999999, "o/r")
	wantCode(t, err, teammem.ENotFound)
}

func testApplyWrites(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("MEMORY.md", "- [a](a.md)\n"), write("nested/dir/a.md", "ä content"))
	if sp.Version != 1 || sp.EntryCount != 2 {
		t.Fatalf("after first apply: %+v", sp)
	}
	b.checkHead(t, sp)
	sp = b.apply(t, sp, write("nested/dir/a.md", "changed"), del("MEMORY.md"))
	if sp.Version != 2 || sp.EntryCount != 1 {
		t.Fatalf("after second apply: %+v", sp)
	}
	b.checkHead(t, sp)
	e := must[teammem.Entry](t)(b.store.EntryGet(b.ctx, b.org.ID, sp.ID, "nested/dir/a.md"))
	if e.Content != "changed" || e.Version != 2 || e.Author != "alice" || e.ClientID != "test" || e.Size != 7 {
		t.Fatalf("EntryGet = %+v", e)
	}
	_, err := b.store.EntryGet(b.ctx, b.org.ID, sp.ID, "MEMORY.md")
	wantCode(t, err, teammem.ENotFound)
	got := must[teammem.Space](t)(b.store.SpaceGet(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: sp.RepoID, Scope: teammem.ScopeTeam}))
	if got.Version != sp.Version || got.Checksum != sp.Checksum {
		t.Fatalf("SpaceGet = %+v, want %+v", got, sp)
	}
	list := must[[]teammem.Entry](t)(b.store.EntriesList(b.ctx, b.org.ID, sp.ID, false))
	if len(list) != 1 || list[0].Content != "" || list[0].Checksum != teammem.EntryChecksum("changed") {
		t.Fatalf("EntriesList without content = %+v", list)
	}
	head, snap, err := b.store.SpaceSnapshot(b.ctx, b.org.ID, sp.ID, true)
	if err != nil || head.Version != sp.Version || len(snap) != 1 || snap[0].Content != "changed" ||
		teammem.SpaceChecksum(map[string]string{snap[0].Key: snap[0].Checksum}) != head.Checksum {
		t.Fatalf("SpaceSnapshot = %+v %+v %v", head, snap, err)
	}
}

func testApplyNoop(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "x"))
	same := b.apply(t, sp)
	if same.Version != sp.Version || same.Checksum != sp.Checksum {
		t.Fatalf("no-op apply moved the head: %+v -> %+v", sp, same)
	}
}

func testApplyError(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "x"))
	boom := teammem.Errorf(teammem.EConflict, "boom")
	_, err := teammem.SpaceApply(b.ctx, b.store, b.org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{}, Plan: func(s teammem.Space, heads map[string]teammem.Entry, cur func(string) (string, error)) ([]teammem.EntryChange, error) {
		if s.Version != 1 || len(heads) != 1 || heads["a.md"].Checksum != teammem.EntryChecksum("x") {
			t.Errorf("fn saw space %+v heads %+v", s, heads)
		}
		if c, err := cur("a.md"); err != nil || c != "x" {
			t.Errorf("current(a.md) = %q, %v", c, err)
		}
		if _, err := cur("missing.md"); teammem.ErrorCode(err) != teammem.ENotFound {
			t.Errorf("current(missing) err = %v", err)
		}
		return []teammem.EntryChange{write("b.md", "y")}, boom
	}})
	if err != boom {
		t.Fatalf("SpaceApply error = %v, want the fn's error", err)
	}
	if list := must[[]teammem.Entry](t)(b.store.EntriesList(b.ctx, b.org.ID, sp.ID, false)); len(list) != 1 {
		t.Fatalf("failed apply wrote: %+v", list)
	}
	_, err = teammem.SpaceApply(b.ctx, b.store, b.org.ID, 999999, teammem.ApplyParams{Actor: teammem.Actor{}, Plan: nil})
	wantCode(t, err, teammem.ENotFound)
}

func testTombstones(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "gone soon"))
	sp = b.apply(t, sp, del("a.md"))
	heads := must[map[string]teammem.Entry](t)(b.store.EntryHeads(b.ctx, b.org.ID, sp.ID))
	h := heads["a.md"]
	if !h.Deleted || h.Checksum != teammem.EntryChecksum("gone soon") || h.Version != 2 {
		t.Fatalf("tombstone head = %+v", h)
	}
	if sp.EntryCount != 0 || sp.Checksum != teammem.EmptySpaceChecksum {
		t.Fatalf("space after delete = %+v", sp)
	}
	sp = b.apply(t, sp, write("a.md", "back"))
	b.checkHead(t, sp)
}

func testChanges(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "1"), write("b.md", "1"))
	v1 := sp.Version
	sp = b.apply(t, sp, write("a.md", "2"))
	sp = b.apply(t, sp, del("b.md"))
	ch := must[[]teammem.Entry](t)(b.store.ChangesList(b.ctx, b.org.ID, sp.ID, v1))
	if len(ch) != 2 || ch[0].Key != "a.md" || ch[0].Content != "2" || ch[1].Key != "b.md" || !ch[1].Deleted || ch[1].Content != "" {
		t.Fatalf("ChangesList = %+v", ch)
	}
	if ch := must[[]teammem.Entry](t)(b.store.ChangesList(b.ctx, b.org.ID, sp.ID, sp.Version)); len(ch) != 0 {
		t.Fatalf("ChangesList at head = %+v", ch)
	}
}

// testChangesOverlap: a write flagged as an overlapping merge is listed
// with the flag; any later write of the key clears it, a delete too.
func testChangesOverlap(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	merged := write("a.md", "ours\ntheirs\n")
	merged.Overlap = true
	sp = b.apply(t, sp, merged, write("b.md", "plain"))
	ch := must[[]teammem.Entry](t)(b.store.ChangesList(b.ctx, b.org.ID, sp.ID, 0))
	if len(ch) != 2 || ch[0].Key != "a.md" || !ch[0].Overlap || ch[1].Overlap {
		t.Fatalf("ChangesList after an overlapping merge = %+v", ch)
	}
	v := sp.Version
	sp = b.apply(t, sp, write("a.md", "reviewed\n"))
	if ch := must[[]teammem.Entry](t)(b.store.ChangesList(b.ctx, b.org.ID, sp.ID, v)); len(ch) != 1 || ch[0].Overlap {
		t.Fatalf("ChangesList after a plain write = %+v", ch)
	}
	sp = b.apply(t, sp, merged)
	sp = b.apply(t, sp, del("a.md"))
	if ch := must[[]teammem.Entry](t)(b.store.ChangesList(b.ctx, b.org.ID, sp.ID, v)); len(ch) != 1 || !ch[0].Deleted || ch[0].Overlap {
		t.Fatalf("ChangesList after a delete = %+v", ch)
	}
}

func testHistory(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "one"))
	sp = b.apply(t, sp, write("a.md", "two"))
	sp = b.apply(t, sp, del("a.md"))
	sp = b.apply(t, sp, teammem.EntryChange{Key: "a.md", Op: teammem.OpRestore, Content: "one"})
	hist := must[[]teammem.EntryVersion](t)(b.store.EntryHistory(b.ctx, b.org.ID, sp.ID, "a.md"))
	ops := ""
	for _, v := range hist {
		ops += fmt.Sprintf("%d:%s ", v.Version, v.Op)
		if v.Author != "alice" {
			t.Errorf("version %d author = %q", v.Version, v.Author)
		}
	}
	if ops != "4:restore 3:delete 2:write 1:write " {
		t.Fatalf("history = %s", ops)
	}
	v := must[teammem.EntryVersion](t)(b.store.EntryVersionGet(b.ctx, b.org.ID, sp.ID, "a.md", 2))
	if v.Content != "two" || v.Checksum != teammem.EntryChecksum("two") {
		t.Fatalf("EntryVersionGet = %+v", v)
	}
	_, err := b.store.EntryVersionGet(b.ctx, b.org.ID, sp.ID, "a.md", 99)
	wantCode(t, err, teammem.ENotFound)
}

func testPurge(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "x"), write("b.md", "y"))
	sp = b.apply(t, sp, del("a.md"))
	if n := must[int](t)(b.store.TombstonesPurge(b.ctx, time.Now().Add(-time.Hour))); n != 0 {
		t.Fatalf("purge of fresh tombstones removed %d", n)
	}
	if n := must[int](t)(b.store.TombstonesPurge(b.ctx, time.Now().Add(time.Hour))); n != 1 {
		t.Fatalf("purge removed %d, want 1", n)
	}
	got := must[teammem.Space](t)(b.store.SpaceGet(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: sp.RepoID, Scope: teammem.ScopeTeam}))
	if got.PurgedThrough != sp.Version {
		t.Fatalf("PurgedThrough = %d, want %d", got.PurgedThrough, sp.Version)
	}
	if heads := must[map[string]teammem.Entry](t)(b.store.EntryHeads(b.ctx, b.org.ID, sp.ID)); len(heads) != 1 {
		t.Fatalf("heads after purge = %+v", heads)
	}
}

func testAudit(t *testing.T, b *bundle) {
	for i, a := range []string{"key.create", "push.secret_skipped", "key.create"} {
		repo := ""
		if i == 1 {
			repo = "o/r"
		}
		if err := b.store.AuditAppend(b.ctx, b.org.ID, teammem.AuditEvent{ActorID: b.owner.ID, Action: a, Repo: repo,
			Details: map[string]any{"rule_ids": []any{"github-pat"}}}); err != nil {
			t.Fatal(err)
		}
	}
	all := must[[]teammem.AuditEvent](t)(b.store.AuditList(b.ctx, b.org.ID, teammem.AuditFilter{}))
	if len(all) != 3 || all[0].ID < all[1].ID || all[0].Actor != "alice" {
		t.Fatalf("AuditList = %+v", all)
	}
	if l := must[[]teammem.AuditEvent](t)(b.store.AuditList(b.ctx, b.org.ID, teammem.AuditFilter{Action: "key.create"})); len(l) != 2 {
		t.Fatalf("by action = %+v", l)
	}
	if l := must[[]teammem.AuditEvent](t)(b.store.AuditList(b.ctx, b.org.ID, teammem.AuditFilter{Repo: "o/r"})); len(l) != 1 || l[0].Details["rule_ids"] == nil {
		t.Fatalf("by repo = %+v", l)
	}
	if l := must[[]teammem.AuditEvent](t)(b.store.AuditList(b.ctx, b.org.ID, teammem.AuditFilter{ActorID: b.member.ID})); len(l) != 0 {
		t.Fatalf("by other actor = %+v", l)
	}
	page := must[[]teammem.AuditEvent](t)(b.store.AuditList(b.ctx, b.org.ID, teammem.AuditFilter{Limit: 2}))
	next := must[[]teammem.AuditEvent](t)(b.store.AuditList(b.ctx, b.org.ID, teammem.AuditFilter{Limit: 2, BeforeID: page[1].ID}))
	if len(page) != 2 || len(next) != 1 || next[0].ID != all[2].ID {
		t.Fatalf("paging: %+v then %+v", page, next)
	}
}

func testTenantIsolation(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "secret plans"))
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "evil", Name: "Evil"}))
	if _, err := b.store.EntryGet(b.ctx, other.ID, sp.ID, "a.md"); teammem.ErrorCode(err) != teammem.ENotFound {
		t.Fatalf("EntryGet across orgs: %v", err)
	}
	if l, err := b.store.EntriesList(b.ctx, other.ID, sp.ID, true); err != nil || len(l) != 0 {
		t.Fatalf("EntriesList across orgs = %+v, %v", l, err)
	}
	if l, err := b.store.ChangesList(b.ctx, other.ID, sp.ID, 0); err != nil || len(l) != 0 {
		t.Fatalf("ChangesList across orgs = %+v, %v", l, err)
	}
	if h, err := b.store.EntryHistory(b.ctx, other.ID, sp.ID, "a.md"); err != nil || len(h) != 0 {
		t.Fatalf("EntryHistory across orgs = %+v, %v", h, err)
	}
	_, err := teammem.SpaceApply(b.ctx, b.store, other.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{}, Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
		return []teammem.EntryChange{write("x.md", "x")}, nil
	}})
	wantCode(t, err, teammem.ENotFound)
	if _, err := b.store.UserGet(b.ctx, other.ID, b.owner.ID); teammem.ErrorCode(err) != teammem.ENotFound {
		t.Fatalf("UserGet across orgs: %v", err)
	}
	if _, err := b.store.RepoGet(b.ctx, other.ID, "o/r"); teammem.ErrorCode(err) != teammem.ENotFound {
		t.Fatalf("RepoGet across orgs: %v", err)
	}
	if l := must[[]teammem.RepoSummary](t)(b.store.RepoList(b.ctx, other.ID)); len(l) != 0 {
		t.Fatalf("RepoList across orgs = %+v", l)
	}
	if l := must[[]teammem.APIKey](t)(b.store.KeyList(b.ctx, other.ID, teammem.KeyFilter{})); len(l) != 0 {
		t.Fatalf("KeyList across orgs = %+v", l)
	}
}

func testConcurrentApply(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	const writers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("w%d/%d.md", w, i)
				_, err := teammem.SpaceApply(b.ctx, b.store, b.org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: b.member.ID}, Plan: func(s teammem.Space, heads map[string]teammem.Entry, _ func(string) (string, error)) ([]teammem.EntryChange, error) {
					if len(heads) != s.EntryCount {
						return nil, fmt.Errorf("heads %d != count %d: not isolated", len(heads), s.EntryCount)
					}
					return []teammem.EntryChange{write(key, key)}, nil
				}})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := must[teammem.Space](t)(b.store.SpaceGet(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: sp.RepoID, Scope: teammem.ScopeTeam}))
	if got.Version != writers*each || got.EntryCount != writers*each {
		t.Fatalf("after concurrent writes: %+v", got)
	}
	b.checkHead(t, got)
}

// testPlanThroughApply runs the domain's Plan inside SpaceApply, the way the
// server does, to check the pieces fit: conflicts report current content.
func testPlanThroughApply(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "theirs"))
	stale := teammem.EntryChecksum("base")
	req := teammem.WriteRequest{Upserts: []teammem.Upsert{{Key: "a.md", Content: "mine", Base: &stale}}}
	_, err := teammem.SpaceApply(b.ctx, b.store, b.org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{}, Plan: func(s teammem.Space, heads map[string]teammem.Entry, cur func(string) (string, error)) ([]teammem.EntryChange, error) {
		ch, _, err := teammem.Plan(req, teammem.PlanInput{Space: s, Heads: heads, Current: cur,
			Limits: teammem.Limits{MaxEntries: 10, MaxEntryBytes: 100}, Now: time.Now()})
		return ch, err
	}})
	wantCode(t, err, teammem.EConflict)
	conflicts := teammem.ErrorDetails(err)["conflicts"].([]teammem.Conflict)
	if len(conflicts) != 1 || conflicts[0].Content != "theirs" || conflicts[0].Checksum != teammem.EntryChecksum("theirs") {
		t.Fatalf("conflicts = %+v", conflicts)
	}
}

func testPersonalSpacesSplit(t *testing.T, b *bundle) {
	repo := must[teammem.Repo](t)(b.store.RepoEnsure(b.ctx, b.org.ID, "o/r"))
	alice := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: b.owner.ID}))
	bob := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: b.member.ID}))
	b.apply(t, alice, write("mine.md", "alice only"))
	if l := must[[]teammem.Entry](t)(b.store.EntriesList(b.ctx, b.org.ID, bob.ID, true)); len(l) != 0 {
		t.Fatalf("bob sees %+v", l)
	}
}

// PairOpener returns two handles on one fresh, empty, migrated database, as
// two server replicas or processes hold them; it registers its own cleanup.
type PairOpener func(t *testing.T) (teammem.Store, teammem.Store)

// RunShared runs the tests that need two handles on one database: what one
// writes, the other's writes must build on, whatever either keeps in memory.
func RunShared(t *testing.T, open PairOpener) {
	t.Run("HeadsAcrossHandles", func(t *testing.T) {
		t.Parallel()
		a, other := open(t)
		b := setup(t, func(*testing.T) teammem.Store { return a })
		testHeadsAcrossHandles(t, b, other)
	})
	t.Run("EarlyHeadsAcrossHandles", func(t *testing.T) {
		t.Parallel()
		a, other := open(t)
		b := setup(t, func(*testing.T) teammem.Store { return a })
		testEarlyHeadsAcrossHandles(t, b, other)
	})
}

// headsApply applies changes through s and returns the heads fn was given,
// after checking them against the database's.
func (b *bundle) headsApply(t *testing.T, s teammem.Store, sp teammem.Space, changes ...teammem.EntryChange) (map[string]teammem.Entry, teammem.Space) {
	t.Helper()
	var seen map[string]teammem.Entry
	got, err := teammem.SpaceApply(b.ctx, s, b.org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: b.owner.ID, ClientID: "test"}, Plan: func(_ teammem.Space, heads map[string]teammem.Entry, _ func(string) (string, error)) ([]teammem.EntryChange, error) {
		seen = maps.Clone(heads)
		fresh, err := b.store.EntryHeads(b.ctx, b.org.ID, sp.ID)
		if err != nil {
			return nil, err
		}
		if !sameHeads(heads, fresh) {
			t.Errorf("heads given to the write = %v\nthe database holds %v", heads, fresh)
		}
		return changes, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return seen, got
}

// sameHeads compares heads field by field but for the author's handle,
// which the write path does not read.
func sameHeads(x, y map[string]teammem.Entry) bool {
	return maps.EqualFunc(x, y, func(a, b teammem.Entry) bool {
		a.Author, b.Author = "", ""
		return a.Key == b.Key && a.Checksum == b.Checksum && a.Size == b.Size && a.Version == b.Version &&
			a.Deleted == b.Deleted && a.AuthorID == b.AuthorID && a.ClientID == b.ClientID && a.UpdatedAt.Equal(b.UpdatedAt)
	})
}

func testHeadsAcrossHandles(t *testing.T, b *bundle, other teammem.Store) {
	sp := b.space(t, "o/r")
	_, sp = b.headsApply(t, b.store, sp, write("a.md", "1"), write("b.md", "2"))
	_, sp = b.headsApply(t, b.store, sp, write("b.md", "2b")) // same handle again
	_, sp = b.headsApply(t, other, sp, del("a.md"), write("c.md", "3"))
	heads, sp := b.headsApply(t, b.store, sp, write("d.md", "4"))
	if !heads["a.md"].Deleted || heads["c.md"].Checksum != teammem.EntryChecksum("3") {
		t.Fatalf("a write after another handle's did not see it: %v", heads)
	}
	b.checkHead(t, sp)
	// A purge through the other handle removes a tombstone this handle saw.
	if n := must[int](t)(other.TombstonesPurge(b.ctx, time.Now().Add(time.Hour))); n != 1 {
		t.Fatalf("purge removed %d, want 1", n)
	}
	sp = must[teammem.Space](t)(b.store.SpaceGet(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: sp.RepoID, Scope: teammem.ScopeTeam}))
	heads, sp = b.headsApply(t, b.store, sp, write("e.md", "5"))
	if _, ok := heads["a.md"]; ok {
		t.Fatalf("a write after a purge saw the purged tombstone: %v", heads)
	}
	_, sp = b.headsApply(t, b.store, sp)
	b.checkHead(t, sp)
}

// testOrgEditConcurrent runs concurrent read-modify-writes of one org's
// settings, each adding its own allowlist rule id: none is lost, and an
// error from the edit changes nothing.
func testOrgEditConcurrent(t *testing.T, b *bundle) {
	const n = 12
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = b.store.OrgEdit(b.ctx, b.org.ID, func(o teammem.Org) (teammem.OrgUpdateParams, error) {
				set := o.Settings
				set.SecretAllowlist.RuleIDs = append(append([]string{}, set.SecretAllowlist.RuleIDs...), fmt.Sprintf("rule-%02d", i))
				return teammem.OrgUpdateParams{Settings: &set}, nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
	}
	org := must[teammem.Org](t)(b.store.OrgGet(b.ctx, b.org.ID))
	if got := len(org.Settings.SecretAllowlist.RuleIDs); got != n {
		t.Fatalf("after %d concurrent edits the allowlist has %d rule ids: %v", n, got, org.Settings.SecretAllowlist.RuleIDs)
	}
	_, err := b.store.OrgEdit(b.ctx, b.org.ID, func(o teammem.Org) (teammem.OrgUpdateParams, error) {
		return teammem.OrgUpdateParams{}, teammem.Errorf(teammem.EPreconditionFailed, "refused")
	})
	wantCode(t, err, teammem.EPreconditionFailed)
	if o := must[teammem.Org](t)(b.store.OrgGet(b.ctx, b.org.ID)); o.Name != b.org.Name || len(o.Settings.SecretAllowlist.RuleIDs) != n {
		t.Fatalf("a refused edit changed the org: %+v", o)
	}
	_, err = b.store.OrgEdit(b.ctx, 999999, func(o teammem.Org) (teammem.OrgUpdateParams, error) { return teammem.OrgUpdateParams{}, nil })
	wantCode(t, err, teammem.ENotFound)
}

// testAuditInTransaction: a write's audit events commit with its changes,
// and a write that rolls back (an error from the plan) leaves none.
func testAuditInTransaction(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	event := func() []teammem.AuditEvent {
		return []teammem.AuditEvent{{ActorID: b.owner.ID, Action: "test.write", Repo: "o/r", Target: "a.md"}}
	}
	refused := teammem.Errorf(teammem.EConflict, "refused")
	_, err := teammem.SpaceApply(b.ctx, b.store, b.org.ID, sp.ID, teammem.ApplyParams{Audit: event,
		Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
			return []teammem.EntryChange{{Key: "a.md", Op: teammem.OpWrite, Content: "x"}}, refused
		}})
	wantCode(t, err, teammem.EConflict)
	if got := must[[]teammem.AuditEvent](t)(b.store.AuditList(b.ctx, b.org.ID, teammem.AuditFilter{Action: "test.write"})); len(got) != 0 {
		t.Fatalf("a refused write left audit rows: %+v", got)
	}
	b.apply(t, sp) // no changes: no audit either
	if _, err := teammem.SpaceApply(b.ctx, b.store, b.org.ID, sp.ID, teammem.ApplyParams{Audit: event, Actor: teammem.Actor{UserID: b.owner.ID},
		Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
			return []teammem.EntryChange{{Key: "a.md", Op: teammem.OpWrite, Content: "x"}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	got := must[[]teammem.AuditEvent](t)(b.store.AuditList(b.ctx, b.org.ID, teammem.AuditFilter{Action: "test.write"}))
	if len(got) != 1 || got[0].Target != "a.md" || got[0].Actor != "alice" {
		t.Fatalf("audit rows after the write: %+v", got)
	}
}
