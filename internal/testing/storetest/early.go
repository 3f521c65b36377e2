package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// Early plans (ApplyParams.Early): a write planned before the lock on the
// cached heads commits what it planned only when the head at the lock is
// the one it planned on; otherwise it plans again under the lock, and the
// head it commits always matches its entries.

// earlyCall is one call of an early-enabled plan: whether it ran before the
// lock (current fails there) and the heads it was given.
type earlyCall struct {
	early bool
	heads map[string]teammem.Entry
}

// earlyApply applies changes with Early set and returns the new head and
// the plan's calls; before, when set, runs inside the first call.
func (b *bundle) earlyApply(t *testing.T, s teammem.Store, sp teammem.Space, before func(first earlyCall), changes ...teammem.EntryChange) (teammem.Space, []earlyCall) {
	t.Helper()
	var calls []earlyCall
	head, err := teammem.SpaceApply(b.ctx, s, b.org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: b.owner.ID, ClientID: "test"}, Early: true,
		Plan: func(_ teammem.Space, heads map[string]teammem.Entry, cur func(string) (string, error)) ([]teammem.EntryChange, error) {
			_, err := cur("a.md")
			c := earlyCall{early: err != nil && teammem.ErrorCode(err) != teammem.ENotFound, heads: heads}
			calls = append(calls, c)
			if len(calls) == 1 && before != nil {
				before(c)
			}
			return changes, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return head, calls
}

// testEarlyApply: with the head unchanged since it was cached, the write
// is planned once, before the lock; when another write commits between the
// early plan and the lock, it is planned again under the lock on the new
// heads, and nothing the other write did is lost.
func testEarlyApply(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	sp = b.apply(t, sp, write("a.md", "1"))
	sp, calls := b.earlyApply(t, b.store, sp, nil, write("b.md", "2"))
	if len(calls) != 1 || !calls[0].early {
		t.Fatalf("plan calls %+v, want one, before the lock", calls)
	}
	b.checkHead(t, sp)

	var raced teammem.Space
	sp, calls = b.earlyApply(t, b.store, sp, func(first earlyCall) {
		if !first.early {
			t.Error("the first plan ran under the lock")
			return
		}
		raced = b.apply(t, sp, write("c.md", "3"), del("a.md")) // commits first
	}, write("d.md", "4"))
	if len(calls) != 2 || calls[1].early {
		t.Fatalf("plan calls %+v, want an early one, then one under the lock", calls)
	}
	if _, ok := calls[1].heads["c.md"]; !ok || !calls[1].heads["a.md"].Deleted {
		t.Fatalf("the plan under the lock did not see the other write: %v", calls[1].heads)
	}
	if sp.Version != raced.Version+1 || sp.EntryCount != 3 {
		t.Fatalf("head after the race = %+v, want version %d with b, c, d", sp, raced.Version+1)
	}
	b.checkHead(t, sp)
	if _, err := b.store.EntryGet(b.ctx, b.org.ID, sp.ID, "c.md"); err != nil {
		t.Fatalf("the other write's entry: %v", err)
	}
}

// testEarlyHeadsAcrossHandles: a handle whose cached heads another handle's
// write made stale plans early on them, finds another head at the lock and
// plans again on the database's heads.
func testEarlyHeadsAcrossHandles(t *testing.T, b *bundle, other teammem.Store) {
	sp := b.space(t, "o/early")
	_, sp = b.headsApply(t, b.store, sp, write("a.md", "1"), write("b.md", "2"))
	_, sp = b.headsApply(t, other, sp, write("b.md", "2b"), write("c.md", "3"))
	sp, calls := b.earlyApply(t, b.store, sp, nil, write("d.md", "4"))
	if len(calls) != 2 || !calls[0].early || calls[1].early {
		t.Fatalf("plan calls %+v, want an early one on the stale heads, then one under the lock", calls)
	}
	if _, ok := calls[0].heads["c.md"]; ok {
		t.Fatalf("the early plan was not on the stale heads: %v", calls[0].heads)
	}
	if calls[1].heads["b.md"].Checksum != teammem.EntryChecksum("2b") {
		t.Fatalf("the plan under the lock did not see the other handle's write: %v", calls[1].heads)
	}
	if sp.EntryCount != 4 {
		t.Fatalf("head = %+v, want a, b, c, d", sp)
	}
	b.checkHead(t, sp)
}

// testConcurrentEarlyApply is testConcurrentApply with early plans: every
// write lands once, and the head matches the entries.
func testConcurrentEarlyApply(t *testing.T, b *bundle) {
	sp := b.space(t, "o/r")
	const writers, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Sprintf("w%d/%d.md", w, i)
				_, err := teammem.SpaceApply(b.ctx, b.store, b.org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: b.member.ID}, Early: true,
					Plan: func(s teammem.Space, heads map[string]teammem.Entry, _ func(string) (string, error)) ([]teammem.EntryChange, error) {
						if len(heads) != s.EntryCount {
							return nil, fmt.Errorf("heads %d != count %d: not one state", len(heads), s.EntryCount)
						}
						return []teammem.EntryChange{write(key, key)}, nil
					}})
				errs <- err
			}
		})
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
