package httpapi_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// tsCheck is one observation of testdata/tssdk/memstores.mjs: what the
// TypeScript SDK saw and what its declarations want.
type tsCheck struct {
	Name string `json:"name"`
	Got  any    `json:"got"`
	Want any    `json:"want"`
}

// TestMemoryStoresTypeScriptSDK drives the public Memory Stores API with the
// official TypeScript SDK (@anthropic-ai/sdk 1.15.0, installed by
// scripts/test and named by TEAMMEM_TS_SDK) against a real server on both
// drivers: every method of memoryStores, memories and memoryVersions, the
// SDK's auto-paging iterators and its error classes, and the response
// fields against the SDK's type definitions.
func TestMemoryStoresTypeScriptSDK(t *testing.T) {
	sdk, node := tsSDK(t)
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		limited := newV1Env(t, MustOpenStore(t), func(c *httpapi.Config) { c.WriteRate, c.WriteBurst = 0.0001, 2 }) // the store create spends one
		checks := runTSSDK(t, node, sdk, e, limited)
		t.Logf("%d checks by the TypeScript SDK", len(checks))
		for _, c := range checks {
			if !reflect.DeepEqual(c.Got, c.Want) {
				t.Errorf("%s: got %s, want %s", c.Name, jsonText(c.Got), jsonText(c.Want))
			}
		}
	})
}

// tsSDK finds the SDK and node, skipping (failing under CI) without them.
func tsSDK(t *testing.T) (sdk, node string) {
	t.Helper()
	sdk = os.Getenv("TEAMMEM_TS_SDK")
	if sdk == "" {
		if ciRun() {
			t.Fatal("TEAMMEM_TS_SDK is not set under CI; scripts/test installs @anthropic-ai/sdk 1.15.0 and sets it")
		}
		t.Skip("TypeScript SDK not installed: run scripts/test, which installs @anthropic-ai/sdk 1.15.0 and sets TEAMMEM_TS_SDK")
	}
	if _, err := os.Stat(filepath.Join(sdk, "index.mjs")); err != nil {
		t.Fatalf("TEAMMEM_TS_SDK=%s is not the SDK's package directory: %v", sdk, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("TEAMMEM_TS_SDK is set but node is not on PATH: %v", err)
	}
	return sdk, node
}

// runTSSDK runs the script against e (and limited, for the 429 case) and
// decodes its checks; cases, when given, narrow it to those cases.
func runTSSDK(t *testing.T, node, sdk string, e, limited *v1Env, cases ...string) []tsCheck {
	t.Helper()
	return runTSScript(t, node, sdk, "memstores.mjs", cases, "TEAMMEM_URL="+e.url,
		"TEAMMEM_KEY_OWNER="+e.keys[teammem.RoleOwner], "TEAMMEM_KEY_VIEWER="+e.keys[teammem.RoleViewer],
		"TEAMMEM_KEY_READONLY="+readOnlyKey(t, e),
		"TEAMMEM_LIMITED_URL="+limited.url, "TEAMMEM_LIMITED_KEY="+limited.keys[teammem.RoleOwner])
}

// runTSScript runs testdata/tssdk/<script> with args and env and decodes
// the checks it prints.
func runTSScript(t *testing.T, node, sdk, script string, args []string, env ...string) []tsCheck {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), node, append([]string{filepath.Join("testdata", "tssdk", script)}, args...)...)
	cmd.Env = append(append(os.Environ(), "TEAMMEM_TS_SDK="+sdk), env...)
	// The SDK reads these; none may send a test's traffic elsewhere.
	cmd.Env = append(cmd.Env, "ANTHROPIC_BASE_URL=", "ANTHROPIC_API_KEY=", "ANTHROPIC_AUTH_TOKEN=", "HTTP_PROXY=", "HTTPS_PROXY=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.Bytes())
	}
	var res struct {
		Checks []tsCheck `json:"checks"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%s printed no JSON: %v\n%s\n%s", script, err, out, stderr.Bytes())
	}
	if len(res.Checks) == 0 {
		t.Fatalf("%s made no checks\n%s", script, stderr.Bytes())
	}
	return res.Checks
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

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ciRun reports whether the tests run under CI (CI set to a true value), where
// a missing conformance client fails instead of skipping.
func ciRun() bool {
	switch os.Getenv("CI") {
	case "", "0", "f", "F", "false", "FALSE", "False":
		return false
	}
	return true
}
