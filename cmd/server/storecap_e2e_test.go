package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMaxStoresPerOrgE2E runs the built server with
// TEAMMEM_MAX_STORES_PER_ORG=2: two stores are created through the Memory
// Stores API, the third is a 400 in Anthropic's envelope naming the limit;
// and a server started with the cap out of range refuses to start, naming
// the variable.
func TestMaxStoresPerOrgE2E(t *testing.T) {
	s := startServer(t, "sqlite://"+filepath.Join(t.TempDir(), "teammem.db"), "TEAMMEM_MAX_STORES_PER_ORG=2")
	c := newRelClient(bootstrapKey)
	for _, name := range []string{"a", "b"} {
		if r := c.do("POST", s.URL+"/v1/memory_stores?beta=true", map[string]any{"name": name}); r.Status != 200 {
			t.Fatalf("create %s: %d %s", name, r.Status, r.Body)
		}
	}
	r := c.do("POST", s.URL+"/v1/memory_stores?beta=true", map[string]any{"name": "c"})
	if r.Status != 400 || r.errorType() != "invalid_request_error" || !strings.Contains(string(r.Body), "limit of 2 memory stores") {
		t.Fatalf("the third create: %d %s", r.Status, r.Body)
	}

	cmd := exec.Command(serverBin)
	cmd.Env = append(os.Environ(), "TEAMMEM_ADDR=127.0.0.1:0", "TEAMMEM_METRICS_ADDR=off",
		"TEAMMEM_DATABASE_URL=sqlite://"+filepath.Join(t.TempDir(), "t.db"), "TEAMMEM_MAX_STORES_PER_ORG=100001")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "TEAMMEM_MAX_STORES_PER_ORG") {
		t.Fatalf("a cap over the ceiling: %v\n%s", err, out)
	}
}
