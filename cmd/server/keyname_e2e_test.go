package main_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/testing/secrettest"
)

// TestCreateKeyRefusesSecretName: admin create-key refuses a key name
// holding a secret, as POST /v1/org/keys does, printing the rule and not
// the secret, and prints no key; a plain name still works.
func TestCreateKeyRefusesSecretName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, errOut, ok := runIn(t, dir, "", "admin", "create-org", "--slug", "acme", "--create"); !ok {
		t.Fatalf("create-org:\n%s%s", out, errOut)
	}
	if out, errOut, ok := runIn(t, dir, "", "admin", "create-user", "--org", "acme", "--handle", "bob"); !ok {
		t.Fatalf("create-user:\n%s%s", out, errOut)
	}
	ghp := secrettest.Token("github-pat")
	keyRE := regexp.MustCompile(`tmk_[a-z2-7]{8}_[a-z2-7]{40}`)
	out, errOut, ok := runIn(t, dir, "", "admin", "create-key", "--org", "acme", "--user", "bob", "--name", "ci "+ghp)
	if ok || keyRE.MatchString(out) || !strings.Contains(errOut, "GitHub PAT") || strings.Contains(out+errOut, ghp) {
		t.Errorf("create-key with a secret in the name: ok %v\n%s%s", ok, out, errOut)
	}
	if out, errOut, ok := runIn(t, dir, "", "admin", "create-key", "--org", "acme", "--user", "bob", "--name", "laptop"); !ok ||
		!keyRE.MatchString(out) {
		t.Errorf("create-key with a plain name:\n%s%s", out, errOut)
	}
}
