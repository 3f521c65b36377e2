package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// newKeyParams is a fresh key of user, capped at max active keys.
func newKeyParams(user int64, max int, expires *time.Time) teammem.KeyCreateParams {
	key, prefix := teammem.NewKeyString()
	return teammem.KeyCreateParams{UserID: user, Name: "k", Prefix: prefix, Hash: teammem.HashKey(key), ExpiresAt: expires, MaxActive: max}
}

// testKeyCap checks KeyCreate's MaxActive: revoked and expired keys do not
// count, other users' keys do not count, and a key past the cap is refused
// with TooManyKeys.
func testKeyCap(t *testing.T, b *bundle) {
	const max = 3
	past := time.Now().Add(-time.Minute)
	expired := must[teammem.APIKey](t)(b.store.KeyCreate(b.ctx, b.org.ID, newKeyParams(b.member.ID, 0, nil)))
	must[teammem.APIKey](t)(b.store.KeyRevoke(b.ctx, b.org.ID, expired.ID, time.Now()))
	// An expired key is stored uncapped (its expiry is in the past) and
	// must not count either.
	must[teammem.APIKey](t)(b.store.KeyCreate(b.ctx, b.org.ID, newKeyParams(b.member.ID, 0, &past)))
	must[teammem.APIKey](t)(b.store.KeyCreate(b.ctx, b.org.ID, newKeyParams(b.owner.ID, 0, nil)))
	for i := range max {
		if _, err := b.store.KeyCreate(b.ctx, b.org.ID, newKeyParams(b.member.ID, max, nil)); err != nil {
			t.Fatalf("key %d of %d: %v", i+1, max, err)
		}
	}
	_, err := b.store.KeyCreate(b.ctx, b.org.ID, newKeyParams(b.member.ID, max, nil))
	wantCode(t, err, teammem.EConflict)
	if d := teammem.ErrorDetails(err); teammem.ErrorReason(err) != teammem.ReasonTooManyKeys || d["max_keys_per_user"] != max {
		t.Fatalf("refusal reason %v, details = %v", teammem.ErrorReason(err), d)
	}
	// Without a cap (the operators' CLI, bootstrap) the key is stored.
	must[teammem.APIKey](t)(b.store.KeyCreate(b.ctx, b.org.ID, newKeyParams(b.member.ID, 0, nil)))
	// A user of another org is still not found, cap or not.
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"}))
	_, err = b.store.KeyCreate(b.ctx, other.ID, newKeyParams(b.member.ID, max, nil))
	wantCode(t, err, teammem.ENotFound)
}

// testKeyCapConcurrent races many creates of one user's keys against a cap:
// exactly the cap's worth succeed, whatever the interleaving.
func testKeyCapConcurrent(t *testing.T, b *bundle) {
	const max = 5
	ok := raceCreates(t, teammem.EConflict, func(int) error {
		_, err := b.store.KeyCreate(b.ctx, b.org.ID, newKeyParams(b.member.ID, max, nil))
		return err
	})
	keys := must[[]teammem.APIKey](t)(b.store.KeyList(b.ctx, b.org.ID, teammem.KeyFilter{UserID: b.member.ID}))
	if ok != max || len(keys) != max {
		t.Fatalf("%d concurrent creates under a cap of %d: %d succeeded, %d stored", raceTries, max, ok, len(keys))
	}
}

// raceTries is how many creates raceCreates starts at once.
const raceTries = 24

// raceCreates runs raceTries creates at once and returns how many
// succeeded; a create may also fail with refused, the cap's error code, and
// any other error fails the test.
func raceCreates(t *testing.T, refused string, create func(i int) error) int {
	var wg sync.WaitGroup
	errs := make(chan error, raceTries)
	for i := range raceTries {
		wg.Go(func() { errs <- create(i) })
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		switch teammem.ErrorCode(err) {
		case "":
			ok++
		case refused:
		default:
			t.Errorf("concurrent create: %v", err)
		}
	}
	return ok
}
