package storetest

import (
	"bytes"
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// console returns the driver's ConsoleStore; every driver must have one.
func (b *bundle) console(t *testing.T) teammem.ConsoleStore {
	t.Helper()
	cs, ok := b.store.(teammem.ConsoleStore)
	if !ok {
		t.Fatalf("%T does not implement teammem.ConsoleStore", b.store)
	}
	return cs
}

func hashOf(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

func testConsoleSessions(t *testing.T, b *bundle) {
	cs := b.console(t)
	now := time.Now().UTC().Truncate(time.Second)
	s := teammem.ConsoleSession{IDHash: hashOf("sid"), KeyHash: hashOf("key"), CSRF: "tok", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := cs.ConsoleSessionCreate(b.ctx, b.org.ID, s); err != nil {
		t.Fatal(err)
	}
	got := must[teammem.ConsoleSession](t)(cs.ConsoleSessionGet(b.ctx, hashOf("sid"), now))
	if got.OrgID != b.org.ID || !bytes.Equal(got.KeyHash, s.KeyHash) || got.CSRF != "tok" || !got.ExpiresAt.Equal(s.ExpiresAt) {
		t.Fatalf("session = %+v, want %+v", got, s)
	}
	_, err := cs.ConsoleSessionGet(b.ctx, hashOf("sid"), now.Add(2*time.Hour))
	wantCode(t, err, teammem.ENotFound) // expired
	_, err = cs.ConsoleSessionGet(b.ctx, hashOf("other"), now)
	wantCode(t, err, teammem.ENotFound)
	if err := cs.ConsoleSessionDelete(b.ctx, hashOf("sid"), now); err != nil {
		t.Fatal(err)
	}
	_, err = cs.ConsoleSessionGet(b.ctx, hashOf("sid"), now)
	wantCode(t, err, teammem.ENotFound)

	// A link is redeemed once, even by racing redemptions, and never late.
	link := teammem.LoginLink{TokenHash: hashOf("link"), KeyHash: hashOf("key"), ExpiresAt: now.Add(time.Minute)}
	if err := cs.LoginLinkCreate(b.ctx, b.org.ID, link); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 4 {
		wg.Go(func() {
			l, err := cs.LoginLinkRedeem(b.ctx, hashOf("link"), now)
			mu.Lock()
			defer mu.Unlock()
			switch teammem.ErrorCode(err) {
			case "":
				won++
				if l.OrgID != b.org.ID || !bytes.Equal(l.KeyHash, link.KeyHash) {
					t.Errorf("redeemed %+v", l)
				}
			case teammem.ENotFound:
			default:
				t.Errorf("redeem: %v", err)
			}
		})
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d redemptions succeeded, want 1", won)
	}
	late := teammem.LoginLink{TokenHash: hashOf("late"), KeyHash: hashOf("key"), ExpiresAt: now.Add(time.Minute)}
	if err := cs.LoginLinkCreate(b.ctx, b.org.ID, late); err != nil {
		t.Fatal(err)
	}
	_, err = cs.LoginLinkRedeem(b.ctx, hashOf("late"), now.Add(time.Hour))
	wantCode(t, err, teammem.ENotFound)
}

func testConsoleOverview(t *testing.T, b *bundle) {
	cs := b.console(t)
	sp := b.space(t, "acme/app")
	b.apply(t, sp, write("a.md", "1"), write("b.md", "1"))
	b.apply(t, sp, write("a.md", "2"))
	repo := must[teammem.Repo](t)(b.store.RepoGet(b.ctx, b.org.ID, "acme/app"))
	personal := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: b.member.ID}))
	b.apply(t, personal, write("mine.md", "x")) // not a team write
	b.space(t, "acme/empty")

	days := must[[]teammem.DayCount](t)(cs.TeamWritesPerDay(b.ctx, b.org.ID, time.Now().Add(-48*time.Hour)))
	total := 0
	for _, d := range days {
		if d.Day.Hour() != 0 || d.Day.Location() != time.UTC {
			t.Errorf("day %v is not a UTC midnight", d.Day)
		}
		total += d.Count
	}
	if total != 3 {
		t.Fatalf("team writes = %d (%+v), want 3", total, days)
	}
	if days := must[[]teammem.DayCount](t)(cs.TeamWritesPerDay(b.ctx, b.org.ID, time.Now().Add(time.Hour))); len(days) != 0 {
		t.Fatalf("writes after now = %+v", days)
	}
	last := must[map[string]teammem.LastWrite](t)(cs.TeamLastWrites(b.ctx, b.org.ID))
	if w, ok := last["acme/app"]; !ok || w.Author != "alice" || w.At.IsZero() || len(last) != 1 {
		t.Fatalf("last writes = %+v", last)
	}
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"}))
	if last := must[map[string]teammem.LastWrite](t)(cs.TeamLastWrites(b.ctx, other.ID)); len(last) != 0 {
		t.Fatalf("another org sees %+v", last)
	}
}

// testKeysWithPrefix finds keys by display prefix across orgs, oldest
// first and at most limit, and nothing for a prefix no key has.
func testKeysWithPrefix(t *testing.T, b *bundle) {
	cs := b.console(t)
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"}))
	carol := must[teammem.User](t)(b.store.UserCreate(b.ctx, other.ID, teammem.UserCreateParams{Handle: "carol", Role: teammem.RoleMember}))
	mk := func(orgID, userID int64, name, prefix string) teammem.APIKey {
		t.Helper()
		return must[teammem.APIKey](t)(b.store.KeyCreate(b.ctx, orgID, teammem.KeyCreateParams{UserID: userID, Name: name, Prefix: prefix,
			Hash: hashOf(name)}))
	}
	first := mk(b.org.ID, b.owner.ID, "first", "samepfx1")
	second := mk(other.ID, carol.ID, "second", "samepfx1")
	mk(b.org.ID, b.member.ID, "unrelated", "otherpfx")
	got := must[[]teammem.APIKey](t)(cs.KeysWithPrefix(b.ctx, "samepfx1", 5))
	if len(got) != 2 || got[0].ID != first.ID || got[1].ID != second.ID || got[0].OrgID != b.org.ID || got[1].OrgID != other.ID ||
		got[1].UserHandle != "carol" || got[0].Prefix != "samepfx1" {
		t.Fatalf("KeysWithPrefix = %+v, want the two keys of prefix samepfx1, oldest first", got)
	}
	if got := must[[]teammem.APIKey](t)(cs.KeysWithPrefix(b.ctx, "samepfx1", 1)); len(got) != 1 || got[0].ID != first.ID {
		t.Fatalf("KeysWithPrefix with limit 1 = %+v", got)
	}
	if got := must[[]teammem.APIKey](t)(cs.KeysWithPrefix(b.ctx, "nosuchpf", 5)); len(got) != 0 {
		t.Fatalf("KeysWithPrefix of an unknown prefix = %+v", got)
	}
}
