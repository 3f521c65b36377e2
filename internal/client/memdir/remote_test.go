package memdir

import (
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

func TestRepoSlug(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url, want string // want "" means no slug
	}{
		// github.com: Claude Code's parseGitRemote (reference §3.2).
		{"scp", "git@github.com:owner/repo.git", "owner/repo"},
		{"scp without .git", "git@github.com:owner/repo", "owner/repo"},
		{"trimmed, case kept", "  git@github.com:Owner/Repo.git\n", "Owner/Repo"},
		{"BOM trimmed like JS trim", "\uFEFFgit@github.com:o/r", "o/r"},
		{"https", "https://github.com/owner/repo.git", "owner/repo"},
		{"https without .git", "https://github.com/owner/repo", "owner/repo"},
		{"http", "http://github.com/o/r", "o/r"},
		{"userinfo dropped", "https://user:tok3n@github.com/o/r.git", "o/r"},
		{"ssh", "ssh://git@github.com/o/r.git", "o/r"},
		{"ssh port dropped", "ssh://git@github.com:22/o/r", "o/r"},
		{"git scheme", "git://github.com/o/r.git", "o/r"},
		{".git stripped once", "https://github.com/o/r.git.git", "o/r.git"},
		{"dots in name", "git@github.com:o/my.repo.js.git", "o/my.repo.js"},
		{"name that is only .git", "https://github.com/o/.git", "o/.git"},
		{"host compared case-insensitively", "https://GitHub.com/o/r", "o/r"},
		{"https port kept: not github.com", "https://github.com:443/o/r", "github.com:443/o/r"},
		{"www is another host", "https://www.github.com/o/r", "www.github.com/o/r"},
		{"ssh alias", "git@github.com-work:o/r.git", ""},
		{"IP address", "git@127.0.0.1:o/r", ""},
		{"local proxy", "http://local_proxy@127.0.0.1:36541/git/o/r", ""},
		{"trailing slash", "https://github.com/o/r/", ""},
		{"three segments (https)", "https://github.com/o/r/extra", ""},
		{"three segments (scp)", "git@github.com:o/r/x.git", ""},
		{"scp user must be git on github", "deploy@github.com:o/r.git", ""},
		{"scheme is case-sensitive", "HTTPS://github.com/o/r", ""},
		{"no scheme", "github.com/o/r", ""},
		{"file URL", "file:///srv/repos/r.git", ""},
		{"local path", "/srv/repos/r.git", ""},
		{"empty", "", ""},
		{"space in name", "git@github.com:o/my repo.git", ""},
		{"percent escape", "https://github.com/o/r%20x", ""},
		{"non-ASCII owner", "https://github.com/ö/r", ""},

		// Other hosts: host/owner/name.
		{"gitlab scp", "git@gitlab.com:group/project.git", "gitlab.com/group/project"},
		{"gitlab nested groups (https)", "https://gitlab.com/group/sub/project.git", "gitlab.com/group--sub/project"},
		{"gitlab nested groups (scp)", "git@gitlab.com:a/b/c/project", "gitlab.com/a--b--c/project"},
		{"host lowercased, https port kept", "https://GitLab.Example.COM:8443/o/r.git", "gitlab.example.com:8443/o/r"},
		{"ssh port dropped", "ssh://git@gitea.example.org:2222/o/r.git", "gitea.example.org/o/r"},
		{"gitea with another ssh user", "gitea@gitea.example.org:o/r.git", "gitea.example.org/o/r"},
		{"GitHub Enterprise", "https://github.example-corp.com/o/r", "github.example-corp.com/o/r"},
		{"self-hosted scp", "git@ghe.corp.internal:team/svc.git", "ghe.corp.internal/team/svc"},
		{"bitbucket with userinfo", "https://me@bitbucket.org/o/r.git", "bitbucket.org/o/r"},
		{"azure devops", "https://dev.azure.com/org/proj/_git/repo", "dev.azure.com/org--proj--_git/repo"},
		{"IP host", "http://192.168.1.5:3000/o/r", ""},
		{"single-label host", "ssh://git@gitserver/o/r", ""},
		{"other host trailing slash", "git@gitlab.com:o/r/", ""},
		{"nested path on github.com with a port", "https://github.com:443/a/b/c", ""},
		{"one segment", "https://gitlab.com/r", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := RepoSlug(tt.url)
			if got != tt.want || ok != (tt.want != "") {
				t.Fatalf("RepoSlug(%q) = %q, %v; want %q", tt.url, got, ok, tt.want)
			}
			if ok {
				if err := teammem.ValidateRepoSlug(got); err != nil {
					t.Errorf("slug %q fails ValidateRepoSlug: %v", got, err)
				}
			}
		})
	}
}
