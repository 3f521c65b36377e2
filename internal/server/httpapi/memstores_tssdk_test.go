package httpapi_test

import (
	"path/filepath"
	"testing"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/tssdk"
)

// TestMemoryStoresTypeScriptSDK drives the public Memory Stores API with the
// official TypeScript SDK (@anthropic-ai/sdk 1.15.0, installed by
// scripts/test and named by TEAMMEM_TS_SDK) against a real server on both
// drivers: every method of memoryStores, memories and memoryVersions, the
// SDK's auto-paging iterators and its error classes, and the response
// fields against the SDK's type definitions.
func TestMemoryStoresTypeScriptSDK(t *testing.T) {
	sdk := tssdk.Find(t)
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		limited := newV1Env(t, MustOpenStore(t), func(c *httpapi.Config) { c.WriteRate, c.WriteBurst = 0.0001, 2 }) // the store create spends one
		checks := runTSSDK(t, sdk, e, limited)
		t.Logf("%d checks by the TypeScript SDK", len(checks))
		tssdk.Assert(t, checks)
	})
}

// runTSSDK runs testdata/tssdk/memstores.mjs against e (and limited, for
// the 429 case) and decodes its checks; cases, when given, narrow it to
// those cases.
func runTSSDK(t *testing.T, sdk tssdk.SDK, e, limited *v1Env, cases ...string) []tssdk.Check {
	t.Helper()
	return sdk.Run(t, filepath.Join("testdata", "tssdk", "memstores.mjs"), cases, "TEAMMEM_URL="+e.url,
		"TEAMMEM_KEY_OWNER="+e.keys[teammem.RoleOwner], "TEAMMEM_KEY_VIEWER="+e.keys[teammem.RoleViewer],
		"TEAMMEM_KEY_READONLY="+readOnlyKey(t, e),
		"TEAMMEM_LIMITED_URL="+limited.url, "TEAMMEM_LIMITED_KEY="+limited.keys[teammem.RoleOwner])
}

// readOnlyKey mints a read-only key for e's owner.
func readOnlyKey(t *testing.T, e *v1Env) string {
	t.Helper()
	key, prefix := teammem.NewKeyString()
	if _, err := e.st.KeyCreate(t.Context(), e.org.ID, teammem.KeyCreateParams{UserID: e.users[teammem.RoleOwner].ID, Name: "read-only",
		Prefix: prefix, Hash: teammem.HashKey(key), ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	return key
}
