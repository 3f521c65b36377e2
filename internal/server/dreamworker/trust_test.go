package dreamworker_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/dreamworker"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// TestRevokedMidDream: the creator's key revoked while a model turn runs
// stops the dream at the turn's write: it fails with permission_error,
// the write is not made and no further turn runs.
func TestRevokedMidDream(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		m := &hookModel{Script: llmtest.NewScript(
			turn(llmtest.ToolUse("t1", "write", map[string]string{"path": "/a.md", "content": "A rewritten fact.\n"})),
			turn(llmtest.Text("never")))}
		b := setup(t, st, m, nil)
		m.hook = func(ctx context.Context, n int) {
			if _, err := st.KeyRevoke(ctx, b.org.ID, b.key.ID, time.Now()); err != nil {
				t.Error(err)
			}
		}
		input := b.inputStore(small)
		d := b.waitReleased(b.dream(input, teammem.DreamUpdateExisting).ID)
		if d.Status != teammem.DreamFailed || d.ErrorType != dreamworker.ErrorPermission || !strings.Contains(d.ErrorMessage, "revoked") {
			t.Fatalf("%s %s %q", d.Status, d.ErrorType, d.ErrorMessage)
		}
		if m.calls.Load() != 1 {
			t.Fatalf("%d model calls after the revoke", m.calls.Load())
		}
		if got := b.files(input.Space.ID); !maps.Equal(got, small) {
			t.Fatalf("written after the revoke: %v", got)
		}
	})
}

// TestCreatorMayNotAct: a dream whose creator may no longer act when it
// starts fails with permission_error before any model turn or write (a
// create_new dream gets no output store), for
// each way the say-so ends; a usable creator's dream runs again after.
func TestCreatorMayNotAct(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		m := &hookModel{Script: llmtest.NewScript(turn(llmtest.Text("nothing to do")), turn(llmtest.Text("nothing to do")))}
		b := setup(t, st, m, nil)
		ctx := t.Context()
		input := b.inputStore(small)
		yes, no := true, false
		viewer, member := teammem.RoleViewer, teammem.RoleMember
		past := time.Now().Add(-time.Hour)
		_, prefix := teammem.NewKeyString()
		expired, err := st.KeyCreate(ctx, b.org.ID, teammem.KeyCreateParams{UserID: b.user.ID, Name: "old", Prefix: prefix,
			Hash: []byte(prefix), ExpiresAt: &past})
		if err != nil {
			t.Fatal(err)
		}
		_, prefix = teammem.NewKeyString()
		readOnly, err := st.KeyCreate(ctx, b.org.ID, teammem.KeyCreateParams{UserID: b.user.ID, Name: "ro", Prefix: prefix,
			Hash: []byte(prefix), ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		userSet := func(p teammem.UserUpdateParams) func() error {
			return func() error { _, err := st.UserUpdate(ctx, b.org.ID, b.user.ID, p); return err }
		}
		orgSet := func(p teammem.OrgUpdateParams) func() error {
			return func() error { _, err := st.OrgUpdate(ctx, b.org.ID, p); return err }
		}
		cases := []struct {
			name, key, want string // key "": her usual key
			behavior        teammem.DreamBehavior
			before, after   func() error
		}{
			{name: "user disabled", want: "user is disabled", behavior: teammem.DreamCreateNew,
				before: userSet(teammem.UserUpdateParams{Disabled: &yes}), after: userSet(teammem.UserUpdateParams{Disabled: &no})},
			{name: "org disabled", want: "organization is disabled", behavior: teammem.DreamUpdateExisting,
				before: orgSet(teammem.OrgUpdateParams{Disabled: &yes}), after: orgSet(teammem.OrgUpdateParams{Disabled: &no})},
			{name: "write lost", want: "may not write", behavior: teammem.DreamCreateNew,
				before: userSet(teammem.UserUpdateParams{Role: &viewer}), after: userSet(teammem.UserUpdateParams{Role: &member})},
			{name: "key expired", key: expired.ID, want: "expired", behavior: teammem.DreamUpdateExisting},
			{name: "key read-only", key: readOnly.ID, want: "read-only", behavior: teammem.DreamUpdateExisting},
		}
		for _, c := range cases {
			if c.before != nil {
				if err := c.before(); err != nil {
					t.Fatal(err)
				}
			}
			key := c.key
			if key == "" {
				key = b.key.ID
			}
			d := b.waitReleased(b.dreamAs(input, c.behavior, key).ID)
			if d.Status != teammem.DreamFailed || d.ErrorType != dreamworker.ErrorPermission || !strings.Contains(d.ErrorMessage, c.want) ||
				(c.behavior == teammem.DreamCreateNew && d.OutputStoreUID != "") || m.calls.Load() != 0 {
				t.Fatalf("%s: %s %s %q, output %q, %d model calls", c.name, d.Status, d.ErrorType, d.ErrorMessage, d.OutputStoreUID, m.calls.Load())
			}
			if c.after != nil {
				if err := c.after(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := b.files(input.Space.ID); !maps.Equal(got, small) {
			t.Fatalf("input written: %v", got)
		}
		if d := b.waitReleased(b.dream(input, teammem.DreamCreateNew).ID); d.Status != teammem.DreamCompleted {
			t.Fatalf("usable creator: %s %s %q", d.Status, d.ErrorType, d.ErrorMessage)
		}
		// A dream created without a key (a nightly dream) is checked
		// without one.
		if d := b.waitReleased(b.dreamAs(input, teammem.DreamCreateNew, "").ID); d.Status != teammem.DreamCompleted {
			t.Fatalf("keyless: %s %s %q", d.Status, d.ErrorType, d.ErrorMessage)
		}
	})
}

// dreamAs creates and enqueues a pending dream of input created with the
// member's key keyID ("": no key, as a nightly dream).
func (b *bundle) dreamAs(input teammem.MemoryStore, behavior teammem.DreamBehavior, keyID string) teammem.Dream {
	b.t.Helper()
	ctx := context.Background()
	d, err := b.st.DreamCreate(ctx, b.org.ID, teammem.Dream{ID: teammem.NewDreamID(), OrgID: b.org.ID, InputSpaceID: input.Space.ID,
		InputStoreUID: input.Space.UID, Model: "m1", ModelSpeed: "standard", Behavior: behavior,
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond), CreatorUserID: b.user.ID, CreatorKeyID: keyID})
	if err != nil {
		b.t.Fatal(err)
	}
	if err := b.runner.Enqueue(ctx, d); err != nil {
		b.t.Fatal(err)
	}
	return d
}
