package httpapi_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/tssdk"
)

// TestDreamsTypeScriptSDK drives the Dreams API's non-running lifecycle
// with the official TypeScript SDK (testdata/tssdk/dreams.mjs) on both
// drivers: create with both behaviours, retrieve, list with filters and
// auto-paging, cancel, archive and every documented refusal.
func TestDreamsTypeScriptSDK(t *testing.T) {
	sdk := tssdk.Find(t)
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e, _ := newDreamEnv(t, st)
		ctx := t.Context()
		r := e.do("POST", "/v1/memory_stores", e.keys[teammem.RoleOwner], map[string]any{"name": "notes"})
		storeID, _ := r.JSON(t)["id"].(string)
		uid, ok := teammem.StoreUID(storeID)
		if !ok {
			t.Fatalf("store create: %d %s", r.Status, r.Body)
		}
		m, err := st.MemoryStoreGet(ctx, e.org.ID, uid)
		if err != nil {
			t.Fatal(err)
		}
		// A completed dream, made by the store's own methods, whose
		// creation is the oldest.
		at := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
		done, err := st.DreamCreate(ctx, e.org.ID, teammem.Dream{ID: teammem.NewDreamID(), InputSpaceID: m.Space.ID, InputStoreUID: uid,
			Model: "m1", ModelSpeed: "standard", Behavior: teammem.DreamCreateNew, CreatedAt: at})
		if err == nil {
			_, err = st.DreamStart(ctx, e.org.ID, done.ID, teammem.DreamStartParams{At: at})
		}
		if err == nil {
			_, err = st.DreamFinish(ctx, e.org.ID, done.ID, teammem.DreamFinishParams{Status: teammem.DreamCompleted, At: at})
		}
		if err != nil {
			t.Fatal(err)
		}
		other := MustOrg(t, st, "other", teammem.OrgSettings{})
		_, strangerKey := MustUserKey(t, st, other, "eve", teammem.RoleOwner)
		checks := sdk.Run(t, filepath.Join("testdata", "tssdk", "dreams.mjs"), nil, "TEAMMEM_URL="+e.url, "TEAMMEM_KEY_OWNER="+e.keys[teammem.RoleOwner],
			"TEAMMEM_KEY_READONLY="+readOnlyKey(t, e), "TEAMMEM_KEY_STRANGER="+strangerKey, "TEAMMEM_STORE="+storeID, "TEAMMEM_DONE_DREAM="+done.ID)
		tssdk.Assert(t, checks)
	})
}
