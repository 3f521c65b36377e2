package memdir

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalSettingsRefusalFailsClosed: when git cannot say whether it
// tracks the local settings file, the file is treated as the repository's.
func TestLocalSettingsRefusalFailsClosed(t *testing.T) {
	t.Parallel()
	tmp := RealTempDir(t)
	proj := filepath.Join(tmp, "broken")
	MustWrite(t, filepath.Join(proj, ".git"), "gitdir: "+filepath.Join(tmp, "nowhere")+"\n")
	file := filepath.Join(proj, ".claude", "settings.local.json")
	MustWrite(t, file, `{"autoMemoryDirectory": "/elsewhere"}`)
	trust := filepath.Join(tmp, ".claude.json")
	MustWrite(t, trust, `{"projects": {"`+proj+`": {"hasTrustDialogAccepted": true}}}`)
	if why := localSettingsRefusal(file, Location{ProjectRoot: proj}, trust); !strings.Contains(why, "cannot tell whether git tracks it") {
		t.Errorf("refusal = %q", why)
	}
	// Outside any repository only trust decides.
	plain := filepath.Join(tmp, "plain")
	file = filepath.Join(plain, ".claude", "settings.local.json")
	MustWrite(t, file, "{}")
	if _, inRepo := FindGitRoot(plain); inRepo {
		t.Skip("the temp dir is inside a git repository")
	}
	if why := localSettingsRefusal(file, Location{ProjectRoot: plain}, trust); !strings.Contains(why, "not trusted") {
		t.Errorf("untrusted, outside a repository: %q", why)
	}
	MustWrite(t, trust, `{"projects": {"`+plain+`": {"hasTrustDialogAccepted": true}}}`)
	if why := localSettingsRefusal(file, Location{ProjectRoot: plain}, trust); why != "" {
		t.Errorf("trusted, outside a repository: %q", why)
	}
}
