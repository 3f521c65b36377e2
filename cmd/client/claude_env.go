package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/claudeproxy"
)

// sessionPlaceholder is the CLAUDE_CODE_SESSION_ACCESS_TOKEN `teammem
// claude` sets when there is no Claude.ai login: any non-empty value opens
// the stock client's sync gate (reference §2.4). It is sent only on memory
// calls, which the proxy strips before they reach teammem; it is never
// the teammem key.
const sessionPlaceholder = "teammem-proxy-placeholder"

// storeConfig is one element of CLAUDE_MEMORY_STORES (reference §2.1).
type storeConfig struct {
	Path  string `json:"path"`
	Mount string `json:"mount"`
	Scope string `json:"scope"`
}

// claudeEnvParams is what the variables of a native session depend on.
type claudeEnvParams struct {
	ProxyAddr string // host:port of the proxy
	Secret    string // the proxy's per-run secret
	CACert    string // the CA certificate's path
	Team      *apiclient.MemoryStore
	Personal  *apiclient.MemoryStore
	// NeedsPlaceholder is set when the user has no Claude.ai login the
	// stock client's sync accepts (see claudeLogin).
	NeedsPlaceholder bool
	// Legacy also sets TEAM_MEMORY_SYNC_URL for 2.1.206 and earlier.
	Legacy bool
	// NoProxy is the caller's NO_PROXY, kept and extended.
	NoProxy string
}

// loopbackNoProxy are the hosts that must not go through the proxy: a
// loopback ANTHROPIC_BASE_URL (a local model gateway, or a test's fake
// Messages API) would otherwise be sent there too.
var loopbackNoProxy = []string{"127.0.0.1", "localhost", "::1"}

// claudeEnv returns the variables a native session sets, in a fixed order
// (--print-env prints them so).
func claudeEnv(p claudeEnvParams) [][2]string {
	var stores []storeConfig
	if p.Team != nil {
		stores = append(stores, storeConfig{Path: p.Team.Path, Mount: teamMount, Scope: "team"})
	}
	if p.Personal != nil {
		stores = append(stores, storeConfig{Path: p.Personal.Path, Mount: personalMount, Scope: "user"})
	}
	js, _ := json.Marshal(stores)
	// The secret rides in the proxy URL's userinfo, which Claude Code
	// sends as Proxy-Authorization on each CONNECT.
	proxy := claudeproxy.ProxyURL(p.ProxyAddr, p.Secret)
	vars := [][2]string{
		{"CLAUDE_MEMORY_STORES", string(js)},
		{"HTTPS_PROXY", proxy},
		{"https_proxy", proxy},
		{"NODE_EXTRA_CA_CERTS", p.CACert},
		{"NO_PROXY", noProxy(p.NoProxy)},
		{"no_proxy", noProxy(p.NoProxy)},
	}
	if p.Legacy {
		vars = append(vars, [2]string{"TEAM_MEMORY_SYNC_URL", claudeproxy.LegacyURL(p.ProxyAddr, p.Secret)})
	}
	if p.NeedsPlaceholder {
		vars = append(vars, [2]string{"CLAUDE_CODE_SESSION_ACCESS_TOKEN", sessionPlaceholder})
	}
	return vars
}

// noProxy adds the loopback hosts to the caller's NO_PROXY list.
func noProxy(have string) string {
	var out []string
	for h := range strings.SplitSeq(have, ",") {
		if h = strings.TrimSpace(h); h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	for _, h := range loopbackNoProxy {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return strings.Join(out, ",")
}

// mergeEnv returns base with vars set (replacing any earlier value); every
// other variable of the caller passes through.
func mergeEnv(base []string, vars [][2]string) []string {
	set := map[string]bool{}
	for _, kv := range vars {
		set[kv[0]] = true
	}
	var out []string
	for _, e := range base {
		k, _, _ := strings.Cut(e, "=")
		if !set[k] {
			out = append(out, e)
		}
	}
	for _, kv := range vars {
		out = append(out, kv[0]+"="+kv[1])
	}
	return out
}

// claudeLogin reports whether the stock client's sync will accept the
// user's own credentials, so that no placeholder session token is needed:
// a Claude.ai OAuth login in <CLAUDE_CONFIG_DIR or ~/.claude>/.credentials.json
// (claudeAiOauth with an access token and the user:inference and
// user:profile scopes) and a first-party base URL (reference §2.4). A
// session token the caller set already counts too. Logins kept in the
// macOS keychain are not seen, so there the placeholder is set; it only
// opens the gate and is stripped by the proxy.
func claudeLogin(getenv func(string) string, home string) bool {
	if getenv("CLAUDE_CODE_SESSION_ACCESS_TOKEN") != "" {
		return true
	}
	if base := getenv("ANTHROPIC_BASE_URL"); base != "" {
		u, err := url.Parse(base)
		if err != nil || (u.Hostname() != "api.anthropic.com" && !strings.HasSuffix(u.Hostname(), ".anthropic.com")) {
			return false
		}
	}
	dir := getenv("CLAUDE_CONFIG_DIR")
	if dir == "" {
		dir = filepath.Join(home, ".claude")
	}
	b, err := os.ReadFile(filepath.Join(dir, ".credentials.json"))
	if err != nil {
		return false
	}
	var creds struct {
		OAuth *struct {
			AccessToken string   `json:"accessToken"`
			Scopes      []string `json:"scopes"`
		} `json:"claudeAiOauth"`
	}
	if json.Unmarshal(b, &creds) != nil || creds.OAuth == nil || creds.OAuth.AccessToken == "" {
		return false
	}
	return slices.Contains(creds.OAuth.Scopes, "user:inference") && slices.Contains(creds.OAuth.Scopes, "user:profile")
}
