package memdir

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/teammem/teammem/internal/teammem"
)

// Claude Code's parseGitRemote patterns (reference §3.2), kept as data.
var (
	scpRemoteRE = regexp.MustCompile(`^git@([^:]+):([^/]+)/([^/]+?)(?:\.git)?$`)
	urlRemoteRE = regexp.MustCompile(`^(https?|ssh|git)://(?:[^@]+@)?([^/:]+(?::\d+)?)/([^/]+)/([^/]+?)(?:\.git)?$`)

	// Wider forms accepted for hosts other than github.com only: an SCP
	// remote with any user, and URLs whose path nests groups (GitLab).
	scpAnyUserRE = regexp.MustCompile(`^[^@/:]+@([^:/]+):([^/]+(?:/[^/]+)+)$`)
	urlNestedRE  = regexp.MustCompile(`^(https?|ssh|git)://(?:[^@]+@)?([^/:]+(?::\d+)?)/([^/]+(?:/[^/]+)+)$`)
)

// NamespaceSeparator joins the group path of a nested remote (GitLab's
// group/subgroup/repo) into the one owner segment a slug has room for:
// gitlab.com/group/sub/repo becomes "gitlab.com/group--sub/repo".
const NamespaceSeparator = "--"

// RepoSlug returns the slug a remote URL is synced under, reporting false
// when it has none (team memory then stays off).
//
// For github.com it is "owner/name", exactly as Claude Code's parseGitRemote
// derives it, so both clients meet in the same space: an SCP remote with the
// user git (git@github.com:o/r.git), or an http, https, ssh or git URL with
// optional userinfo and exactly two path segments; one trailing ".git" is
// stripped, owner and name keep their case, and a trailing slash or a third
// segment yields no slug. An http(s) port stays part of the host, so
// https://github.com:443/o/r is not github.com and yields the three-segment
// "github.com:443/o/r"; an ssh or git port is dropped. Where Claude Code
// finds no slug (and so never syncs), teammem still finds one in two cases:
// the host compares case-insensitively (GitHub.com/o/r is "o/r"), and every
// other host gets a slug, below.
//
// Any other host yields "host/owner/name" with the host lowercased, keeping
// the port for http(s) URLs only. For these hosts an SCP remote may use any
// user (gitea@host:o/r) and a nested group path is collapsed into the owner
// with NamespaceSeparator; both forms are refused for github.com.
//
// The host must look real — hold a '.' and end in a label of ASCII letters —
// which rejects SSH aliases (github.com-work), IP addresses and local
// proxies. Every slug returned passes teammem.ValidateRepoSlug; anything
// else (spaces, percent escapes, non-ASCII names) yields false.
func RepoSlug(remoteURL string) (string, bool) {
	s := jsTrim(remoteURL)
	if host, owner, name, ok := parseClaudeRemote(s); ok {
		return buildSlug(host, []string{owner}, name)
	}
	host, segs, ok := parseWideRemote(s)
	if !ok || isGitHub(stripPort(host)) {
		return "", false
	}
	return buildSlug(host, segs[:len(segs)-1], segs[len(segs)-1])
}

// parseClaudeRemote is Claude Code's parseGitRemote without the final
// github.com comparison.
func parseClaudeRemote(s string) (host, owner, name string, ok bool) {
	if m := scpRemoteRE.FindStringSubmatch(s); m != nil {
		host, owner, name = m[1], m[2], m[3]
	} else if m := urlRemoteRE.FindStringSubmatch(s); m != nil {
		host, owner, name = m[2], m[3], m[4]
		if m[1] != "http" && m[1] != "https" {
			host = stripPort(host)
		}
	} else {
		return "", "", "", false
	}
	return host, owner, name, looksRealHost(stripPort(host))
}

// parseWideRemote parses the forms RepoSlug accepts for other hosts only. It
// returns the path's segments with one trailing ".git" stripped from the
// last.
func parseWideRemote(s string) (host string, segs []string, ok bool) {
	var path string
	if m := scpAnyUserRE.FindStringSubmatch(s); m != nil {
		host, path = m[1], m[2]
	} else if m := urlNestedRE.FindStringSubmatch(s); m != nil {
		host, path = m[2], m[3]
		if m[1] != "http" && m[1] != "https" {
			host = stripPort(host)
		}
	} else {
		return "", nil, false
	}
	segs = strings.Split(path, "/")
	last := segs[len(segs)-1]
	if trimmed := strings.TrimSuffix(last, ".git"); trimmed != "" {
		segs[len(segs)-1] = trimmed
	}
	return host, segs, looksRealHost(stripPort(host))
}

// buildSlug assembles and validates the slug for a parsed remote.
func buildSlug(host string, namespace []string, name string) (string, bool) {
	owner := strings.Join(namespace, NamespaceSeparator)
	slug := owner + "/" + name
	if !isGitHub(host) {
		slug = strings.ToLower(host) + "/" + slug
	}
	if teammem.ValidateRepoSlug(slug) != nil {
		return "", false
	}
	return slug, true
}

// isGitHub reports whether host is github.com, compared case-insensitively,
// without a port.
func isGitHub(host string) bool { return strings.EqualFold(host, "github.com") }

func stripPort(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		return host[:i]
	}
	return host
}

// looksRealHost is Claude Code's check: the host holds a '.' and its last
// dot-separated label is made of ASCII letters only.
func looksRealHost(host string) bool {
	i := strings.LastIndexByte(host, '.')
	if i < 0 || i == len(host)-1 {
		return false
	}
	for _, c := range host[i+1:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// jsTrim trims like JavaScript's String.prototype.trim: Unicode White_Space
// except U+0085, plus U+FEFF, which strings.TrimSpace keeps.
func jsTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) && r != '\u0085' || r == '\uFEFF'
	})
}
