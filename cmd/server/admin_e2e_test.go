package main_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBootstrapGeneratedKeyAndAdmin starts on an empty database without a
// bootstrap key: the generated owner key is printed once and works; the admin
// subcommands then create an org, a user and a key in the same database.
func TestBootstrapGeneratedKeyAndAdmin(t *testing.T) {
	dsn := "sqlite://" + filepath.Join(t.TempDir(), "teammem.db")
	cmd := exec.Command(serverBin)
	cmd.Env = append(os.Environ(), "TEAMMEM_ADDR=127.0.0.1:0", "TEAMMEM_METRICS_ADDR=off", "TEAMMEM_DATABASE_URL="+dsn)
	logs := &syncBuffer{}
	cmd.Stderr = logs
	s := &server{cmd: cmd, logs: logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(t) })
	keyRE := regexp.MustCompile(`tmk_[a-z2-7]{8}_[a-z2-7]{40}`)
	addrRE := regexp.MustCompile(`"addr":"(127\.0\.0\.1:\d+)"`)
	var key, addr string
	for range 300 {
		if m := addrRE.FindStringSubmatch(logs.String()); m != nil {
			addr, key = m[1], keyRE.FindString(logs.String())
			break
		}
		waitABit()
	}
	if addr == "" || key == "" {
		t.Fatalf("no generated key or address in the output:\n%s", logs.String())
	}
	if n := strings.Count(logs.String(), key); n != 1 {
		t.Fatalf("the key appears %d times in the output, want once", n)
	}
	c := &stockClient{t: t, base: "http://" + addr, key: key, repo: "o/r", server: map[string]string{}}
	if r := c.push(map[string]string{"a.md": "a"}); r.Status != 200 {
		t.Fatalf("push with the generated key = %+v", r)
	}
	c.key = "tmk_wrong"
	if st, _, _ := c.do("GET", c.url(false), nil, nil); st != http.StatusUnauthorized {
		t.Fatalf("bad key = %d, want 401", st)
	}

	admin := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(serverBin, append([]string{"admin"}, args...)...)
		cmd.Env = append(os.Environ(), "TEAMMEM_DATABASE_URL="+dsn)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("admin %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	ownerKey := keyRE.FindString(admin("create-org", "--slug", "beta", "--name", "Beta Inc"))
	admin("create-user", "--org", "beta", "--handle", "carol", "--role", "viewer")
	viewerKey := keyRE.FindString(admin("create-key", "--org", "beta", "--user", "carol", "--name", "laptop"))
	if ownerKey == "" || viewerKey == "" {
		t.Fatal("admin commands printed no keys")
	}
	owner := &stockClient{t: t, base: c.base, key: ownerKey, repo: "o/r", server: map[string]string{}}
	if st, _ := owner.pull(); st != 404 { // another org's repo of the same name is not visible
		t.Fatalf("beta sees default's repo: %d", st)
	}
	viewer := &stockClient{t: t, base: c.base, key: viewerKey, repo: "o/r", server: map[string]string{}}
	if r := viewer.push(map[string]string{"v.md": "v"}); r.Status != http.StatusForbidden {
		t.Fatalf("viewer push = %+v, want 403", r)
	}
	out, err := exec.Command(serverBin, "admin", "create-user", "--org", "nope", "--handle", "x", "--database-url", dsn).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "nope") {
		t.Fatalf("create-user in a missing org: %v %s", err, out)
	}
}
