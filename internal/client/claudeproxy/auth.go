package claudeproxy

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ProxyUser is the user name of the proxy credentials in HTTPS_PROXY. Only
// the password (the run's secret) is a secret.
const ProxyUser = "teammem"

// minSecretLen is the shortest secret New accepts: 32 hex digits, 128 bits.
const minSecretLen = 32

// NewSecret returns a fresh per-run secret: 32 random bytes as 64 hex
// digits, safe in a URL's userinfo and as a path segment unescaped.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// ProxyURL is the HTTPS_PROXY value for a proxy at addr (host:port) with
// the run's secret: clients put the userinfo in Proxy-Authorization on
// each CONNECT.
func ProxyURL(addr, secret string) string {
	return (&url.URL{Scheme: "http", User: url.UserPassword(ProxyUser, secret), Host: addr}).String()
}

// LegacyURL is the TEAM_MEMORY_SYNC_URL value for a proxy at addr: the
// secret is the first path segment, and clients append LegacyPath to it.
func LegacyURL(addr, secret string) string {
	return "http://" + addr + "/" + secret
}

// equalSecret compares in constant time (for equal lengths; the length of
// a secret is no secret).
func equalSecret(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// connectAuthorized reports whether a CONNECT carries the run's proxy
// credentials (Proxy-Authorization: Basic teammem:<secret>).
func (p *Proxy) connectAuthorized(r *http.Request) bool {
	scheme, enc, ok := strings.Cut(r.Header.Get("Proxy-Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return false
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	// Both halves are compared whatever the first gave.
	userOK := equalSecret(user, ProxyUser)
	passOK := equalSecret(pass, p.cfg.Secret)
	return ok && userOK && passOK
}

// legacyRoute splits an origin-form legacy request path into its secret
// prefix and the rest, and reports whether the prefix is the run's secret
// and the rest is the legacy endpoint.
func (p *Proxy) legacyRoute(reqPath string) (rest string, ok bool) {
	seg, rest, _ := strings.Cut(strings.TrimPrefix(reqPath, "/"), "/")
	rest = "/" + rest
	if !equalSecret(seg, p.cfg.Secret) {
		return rest, false
	}
	return rest, rest == LegacyPath || strings.HasPrefix(rest, LegacyPath+"/")
}

// loopbackHost reports whether a Host header names this machine by a
// loopback name or address: a page that reached the listener through DNS
// rebinding carries its own domain there.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// safePath reports whether the raw request target (path and query, as it
// came off the wire) has a path without dot segments and without any
// encoding that could turn into one or into another separator further on:
// every segment must decode to itself or to a name with no '/', '\\', '%'
// and no NUL, must not be "." or "..", and only the last may be empty.
func safePath(requestURI string) bool {
	raw, _, _ := strings.Cut(requestURI, "?")
	if !strings.HasPrefix(raw, "/") || strings.ContainsAny(raw, "\\#") {
		return false
	}
	segs := strings.Split(raw[1:], "/")
	for i, s := range segs {
		dec, err := url.PathUnescape(s)
		switch {
		case err != nil, dec == ".", dec == "..", strings.ContainsAny(dec, "/\\%\x00"):
			return false
		case dec == "" && i != len(segs)-1:
			return false
		}
	}
	return true
}
