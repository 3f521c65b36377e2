package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runIn runs teammem-server with args in dir, with TEAMMEM_DATABASE_URL as
// given ("" leaves it unset, for the default), and returns stdout, stderr
// and whether it succeeded.
func runIn(t *testing.T, dir, dsn string, args ...string) (string, string, bool) {
	t.Helper()
	cmd := exec.Command(serverBin, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	if dsn != "" {
		cmd.Env = append(cmd.Env, "TEAMMEM_DATABASE_URL="+dsn)
	} else {
		cmd.Env = append(cmd.Env, "TEAMMEM_DATABASE_URL=") // as if unset: loadEnv skips empty values
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return out.String(), errb.String(), err == nil
}

// TestSubcommandsRefuseToCreateDatabase runs admin, migrate and fsck in a
// directory without a database, as an operator does who is not where the
// server runs: each says which database it looked for and stops, creating
// nothing and printing no key, unless --create asks for a new database.
func TestSubcommandsRefuseToCreateDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	want := filepath.Join(dir, "data", "teammem.db")
	for _, args := range [][]string{
		{"admin", "create-org", "--slug", "acme"},
		{"admin", "create-user", "--org", "default", "--handle", "bob"},
		{"admin", "create-key", "--user", "admin"},
		{"migrate"},
		{"fsck"},
	} {
		out, errOut, ok := runIn(t, dir, "", args...)
		if ok || strings.Contains(out, "tmk_") {
			t.Errorf("%v succeeded or printed a key without a database:\n%s%s", args, out, errOut)
		}
		if !strings.Contains(errOut, "database: sqlite://./data/teammem.db ("+want+")") || !strings.Contains(errOut, "--create") {
			t.Errorf("%v does not name the database it wanted, or how to create one:\n%s", args, errOut)
		}
	}
	out, errOut, ok := runIn(t, dir, "", "backup", "b.db")
	if ok || !strings.Contains(errOut, "database: sqlite://./data/teammem.db ("+want+")") || !strings.Contains(errOut, "no database at "+want+" to back up") {
		t.Errorf("backup without a database:\n%s%s", out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.db")); !os.IsNotExist(err) {
		t.Errorf("a refused backup wrote b.db (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Fatalf("a refused command left %s behind (%v)", filepath.Join(dir, "data"), err)
	}

	out, errOut, ok = runIn(t, dir, "", "admin", "create-org", "--slug", "acme", "--create")
	if !ok || !regexp.MustCompile(`tmk_[a-z2-7]{8}_[a-z2-7]{40}`).MatchString(out) {
		t.Fatalf("create-org --create:\n%s%s", out, errOut)
	}
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("--create made no database: %v", err)
	}
	for _, args := range [][]string{{"migrate"}, {"fsck"}, {"admin", "create-user", "--org", "acme", "--handle", "bob"}} {
		if out, errOut, ok := runIn(t, dir, "", args...); !ok {
			t.Errorf("%v on the database just made:\n%s%s", args, out, errOut)
		}
	}

	// A second org of the same slug, a second user of the same handle.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"admin", "create-org", "--slug", "acme"}, `teammem-server: org "acme" already exists`},
		{[]string{"admin", "create-user", "--org", "acme", "--handle", "bob"}, `teammem-server: user "bob" already exists in org "acme"`},
	} {
		out, errOut, ok := runIn(t, dir, "", c.args...)
		if ok || !strings.Contains(errOut, c.want+"\n") || strings.Contains(errOut, "UNIQUE") || strings.Contains(out, "tmk_") {
			t.Errorf("%v again: ok=%v\n%s%s", c.args, ok, out, errOut)
		}
	}
}

// TestSubcommandsRedactDatabase checks that the database a subcommand
// names on stderr carries no password.
func TestSubcommandsRedactDatabase(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"migrate"}, {"backup", "b.dump"}} {
		_, errOut, ok := runIn(t, t.TempDir(), "postgres://teammem:hunter2-secret@127.0.0.1:1/teammem?connect_timeout=2", args...)
		if ok || !strings.Contains(errOut, "database: postgres://teammem:***@127.0.0.1:1/teammem") || strings.Contains(errOut, "hunter2") {
			t.Errorf("%v on an unreachable Postgres:\n%s", args, errOut)
		}
	}
}
