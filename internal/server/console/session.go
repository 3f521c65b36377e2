package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// Cookie names. Both are HttpOnly, SameSite=Strict, scoped to /ui/ and
// Secure when the request came over TLS, the public URL is https, or a
// trusted proxy says the request was https (Console.secure).
const (
	sessionCookie = "teammem_session"
	// loginCookie holds the token the sign-in forms carry before there is
	// a session (double submit), so a page elsewhere cannot sign a browser
	// in with the attacker's key.
	loginCookie = "teammem_login"
)

// maxFormBytes caps a console form.
const maxFormBytes = 1 << 20

// viewer is the signed-in caller of one request.
type viewer struct {
	p    teammem.Principal
	sess teammem.ConsoleSession
}

// can reports whether the viewer may do a (a change when write).
func (v *viewer) can(a teammem.Action, write bool) bool {
	return teammem.Authorize(v.p, a, write) == nil
}

// pageFunc is a console handler for a signed-in viewer.
type pageFunc func(w http.ResponseWriter, r *http.Request, v *viewer) error

// page adapts a pageFunc: it finds the session (or sends the browser to
// sign in), checks the CSRF token of a POST, and renders a returned error.
func (c *Console) page(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, why := c.session(r)
		if v == nil {
			clearCookie(w, r, c.secure(r), sessionCookie)
			if r.Method == http.MethodPost {
				c.renderError(w, r, nil, http.StatusForbidden, "You are signed out ("+why+"); sign in again.")
				return
			}
			http.Redirect(w, r, "/ui/login?why="+why, http.StatusSeeOther)
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if !c.sameOrigin(r) || !tokenEqual(r.PostFormValue("csrf"), v.sess.CSRF) {
				c.renderError(w, r, v, http.StatusForbidden, "This form's CSRF token is missing or wrong: reload the page and try again.")
				return
			}
		}
		if err := fn(w, r, v); err != nil {
			c.fail(w, r, v, err)
		}
	}
}

// session returns the request's viewer, or nil and why there is none
// (a code of signedOutReasons). The key is looked up afresh every time, so
// revoking it or disabling its user ends the session at its next request.
func (c *Console) session(r *http.Request) (*viewer, string) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return nil, "none"
	}
	s, err := c.cfg.Sessions.ConsoleSessionGet(r.Context(), hashToken(ck.Value), c.now())
	if err != nil {
		return nil, "expired"
	}
	p, err := c.cfg.Backend.Principal(r.Context(), s.KeyHash)
	if err != nil || p.Org.ID != s.OrgID {
		_ = c.cfg.Sessions.ConsoleSessionDelete(r.Context(), s.IDHash, c.now())
		return nil, "revoked"
	}
	return &viewer{p: p, sess: s}, ""
}

// signedOutReasons words the why= of the sign-in page; anything else
// shows nothing, so a link cannot put words on the page.
var signedOutReasons = map[string]string{
	"expired": "Your session expired.",
	"revoked": "You were signed out: the key of this session was revoked or expired, or its user or org was disabled.",
	"out":     "You are signed out.",
}

// signInRefused is the one message of every refused key: unknown,
// malformed, revoked, expired, or of a disabled user or org all read the
// same, so that the page tells a guesser nothing about a key. The org's
// audit log has the reason.
const signInRefused = "Sign-in refused: this key cannot sign in (it may be mistyped, revoked or expired, or its user or organization disabled)."

// startSession opens a session for the key with hash keyHash and sets its
// cookie. A key the API refuses is audited (refuseSignIn) and answered with
// signInRefused; prefix is the typed key's display prefix ("" for a link),
// how says which form was used.
func (c *Console) startSession(w http.ResponseWriter, r *http.Request, keyHash []byte, prefix, how string) error {
	p, err := c.cfg.Backend.Principal(r.Context(), keyHash)
	if err != nil {
		return c.refuseSignIn(r, p, err, prefix, how)
	}
	now := c.now().UTC().Truncate(time.Microsecond)
	expires := now.Add(c.cfg.SessionTTL)
	if k := p.Key.ExpiresAt; k != nil && k.Before(expires) {
		expires = k.UTC()
	}
	id := randomToken()
	s := teammem.ConsoleSession{IDHash: hashToken(id), OrgID: p.Org.ID, KeyHash: keyHash, CSRF: randomToken(), CreatedAt: now, ExpiresAt: expires}
	if err := c.cfg.Sessions.ConsoleSessionCreate(r.Context(), p.Org.ID, s); err != nil {
		return err
	}
	_ = c.cfg.Store.AuditAppend(r.Context(), p.Org.ID, teammem.AuditEvent{ActorID: p.User.ID, Action: "console.sign_in", Target: p.Key.ID,
		Details: map[string]any{"key": p.Key.Name, "client": c.cfg.TrustedProxies.clientAddr(r).String()}})
	setCookie(w, r, c.secure(r), sessionCookie, id, expires)
	clearCookie(w, r, c.secure(r), loginCookie)
	return nil
}

// errSignInRefused is a refused key, answered 401 with signInRefused.
var errSignInRefused = teammem.Errorf(teammem.EUnauthorized, "%s", signInRefused)

// refuseSignIn records a sign-in the API refused (err) and returns the
// error to answer with: errSignInRefused for any refusal of the key, err
// itself when the key could not be checked (the database failed). A key
// the store knows (revoked, expired, its user or org disabled: p names it)
// is audited in its org as console.sign_in_failed, and so is a wrong
// secret for a real key's display prefix (reason "wrong_secret"), in the
// org of each key with that prefix; the events name the key by id, name
// and stored prefix. A key matching nothing belongs to no org and is
// logged. No record holds any part of what was typed.
func (c *Console) refuseSignIn(r *http.Request, p teammem.Principal, err error, prefix, how string) error {
	if status := c.cfg.Backend.Status(err); status != http.StatusUnauthorized && status != http.StatusForbidden {
		return err
	}
	client := c.cfg.TrustedProxies.clientAddr(r).String()
	if p.Org.ID != 0 {
		c.auditRefusal(r, p.Key, teammem.ErrorMessage(err), client, how)
		return errSignInRefused
	}
	var near []teammem.APIKey
	if len(prefix) >= minPrefixLookup {
		var lerr error
		if near, lerr = c.cfg.Sessions.KeysWithPrefix(r.Context(), prefix, maxPrefixMatches); lerr != nil {
			c.cfg.Log.ErrorContext(r.Context(), "looking up a refused console key's prefix failed", "error", lerr.Error())
		}
	}
	for _, k := range near {
		c.auditRefusal(r, k, "wrong_secret", client, how)
	}
	if len(near) == 0 {
		c.cfg.Log.WarnContext(r.Context(), "console sign-in refused: no such key", "client", client, "with", how)
	}
	return errSignInRefused
}

// minPrefixLookup is the shortest typed prefix looked up for the audit
// (generated keys have 8 characters of prefix; a shorter one is no key's),
// and maxPrefixMatches the most keys one refusal is audited against.
const (
	minPrefixLookup  = 8
	maxPrefixMatches = 5
)

// auditRefusal appends the console.sign_in_failed event of key to its org's
// audit log, and a line to the server log.
func (c *Console) auditRefusal(r *http.Request, k teammem.APIKey, reason, client, how string) {
	if aerr := c.cfg.Store.AuditAppend(context.WithoutCancel(r.Context()), k.OrgID, teammem.AuditEvent{ActorID: k.UserID,
		Action: "console.sign_in_failed", Target: k.ID, Details: map[string]any{"key": k.Name, "key_prefix": k.Prefix,
			"reason": reason, "client": client, "with": how}}); aerr != nil {
		c.cfg.Log.ErrorContext(r.Context(), "audit of a refused console sign-in failed", "error", aerr.Error())
	}
	c.cfg.Log.WarnContext(r.Context(), "console sign-in refused", "org_id", k.OrgID, "key_id", k.ID, "reason", reason, "client", client, "with", how)
}

// admit takes a sign-in token of r's client address and, when prefix is
// not empty, of that key prefix. When either bucket is empty it answers
// 429 with Retry-After and reports false: the key is then not looked up.
func (c *Console) admit(w http.ResponseWriter, r *http.Request, prefix string) (signInTicket, bool) {
	client := c.cfg.TrustedProxies.clientAddr(r)
	tk, wait := c.throttle.take(bucketAddr(client), prefix, c.now())
	if wait <= 0 {
		return tk, true
	}
	secs := retrySeconds(wait)
	c.cfg.Log.InfoContext(r.Context(), "console sign-in throttled", "client", client.String(), "retry_after_seconds", secs)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	c.renderLogin(w, r, http.StatusTooManyRequests, fmt.Sprintf("Too many failed sign-ins from this address or with this key: try again in %d s.", secs))
	return tk, false
}

// secure reports whether r's cookies get the Secure flag: the request came
// over TLS, the public URL is https, or a trusted proxy says it was https.
func (c *Console) secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(c.publicOrigin, "https://") || c.cfg.TrustedProxies.forwardedHTTPS(r)
}

// getLogin serves the sign-in form.
func (c *Console) getLogin(w http.ResponseWriter, r *http.Request) {
	if v, _ := c.session(r); v != nil {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	c.renderLogin(w, r, http.StatusOK, signedOutReasons[r.URL.Query().Get("why")])
}

func (c *Console) renderLogin(w http.ResponseWriter, r *http.Request, status int, msg string) {
	tok := randomToken()
	setCookie(w, r, c.secure(r), loginCookie, tok, c.now().Add(time.Hour))
	c.render(w, r, nil, status, "login", "Sign in", struct{ Message, Token string }{msg, tok})
}

// postLogin signs in with an API key typed into the form. Each attempt
// takes a token of its client address's and its key prefix's buckets
// first; a success gives them back, so only failures are throttled.
func (c *Console) postLogin(w http.ResponseWriter, r *http.Request) {
	if !c.loginTokenOK(w, r) {
		return
	}
	key := strings.TrimSpace(r.PostFormValue("key"))
	if key == "" {
		c.renderLogin(w, r, http.StatusBadRequest, "Enter an API key.")
		return
	}
	prefix := teammem.KeyPrefix(key)
	tk, ok := c.admit(w, r, "key:"+prefix)
	if !ok {
		return
	}
	if err := c.startSession(w, r, teammem.HashKey(key), prefix, "key"); err != nil {
		c.renderSignInError(w, r, err)
		return
	}
	c.throttle.refund(tk, c.now())
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// renderSignInError answers a failed sign-in: signInRefused for a refused
// key, a plain retry notice when the server could not check it.
func (c *Console) renderSignInError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, errSignInRefused) {
		c.renderLogin(w, r, http.StatusUnauthorized, signInRefused)
		return
	}
	c.cfg.Log.ErrorContext(r.Context(), "console sign-in failed", "error", err.Error())
	c.renderLogin(w, r, http.StatusServiceUnavailable, "Sign-in failed: the server could not check the key just now; try again.")
}

// getLink shows the button that redeems a login link. Redeeming takes a
// POST, so that a link preview or prefetch does not use it up.
func (c *Console) getLink(w http.ResponseWriter, r *http.Request) {
	tok := randomToken()
	setCookie(w, r, c.secure(r), loginCookie, tok, c.now().Add(time.Hour))
	c.render(w, r, nil, http.StatusOK, "link", "Sign in with a link", struct{ Link, Token string }{r.URL.Query().Get("token"), tok})
}

// postLink redeems a one-time login link.
func (c *Console) postLink(w http.ResponseWriter, r *http.Request) {
	if !c.loginTokenOK(w, r) {
		return
	}
	tk, ok := c.admit(w, r, "")
	if !ok {
		return
	}
	l, err := c.cfg.Sessions.LoginLinkRedeem(r.Context(), hashToken(r.PostFormValue("link")), c.now())
	if err == nil {
		err = c.startSession(w, r, l.KeyHash, "", "link")
	}
	if err != nil {
		c.renderLogin(w, r, http.StatusUnauthorized, "This login link is not valid: it was used already, expired, or its key was revoked.")
		return
	}
	c.throttle.refund(tk, c.now())
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// loginTokenOK checks the double-submitted token of a sign-in form and
// answers 403 when it does not hold.
func (c *Console) loginTokenOK(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	ck, err := r.Cookie(loginCookie)
	if err != nil || !c.sameOrigin(r) || !tokenEqual(r.PostFormValue("csrf"), ck.Value) {
		c.renderError(w, r, nil, http.StatusForbidden, "This form's CSRF token is missing or wrong: reload the sign-in page and try again.")
		return false
	}
	return true
}

// postLogout ends the session.
func (c *Console) postLogout(w http.ResponseWriter, r *http.Request, v *viewer) error {
	_ = c.cfg.Sessions.ConsoleSessionDelete(r.Context(), v.sess.IDHash, c.now())
	clearCookie(w, r, c.secure(r), sessionCookie)
	http.Redirect(w, r, "/ui/login?why=out", http.StatusSeeOther)
	return nil
}

// sameOrigin reports whether a POST's Origin (when the browser sent one)
// is this server (its public URL's origin, or the scheme the request came
// with and its Host), a second line behind the CSRF token.
func (c *Console) sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	if c.publicOrigin != "" && strings.EqualFold(o, c.publicOrigin) {
		return true
	}
	scheme := "http://"
	if r.TLS != nil || c.cfg.TrustedProxies.forwardedHTTPS(r) {
		scheme = "https://"
	}
	return o == scheme+r.Host
}

func tokenEqual(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken is the stored form of a session id or link token.
func hashToken(t string) []byte {
	h := sha256.Sum256([]byte(t))
	return h[:]
}

// NewLoginLink returns a fresh login link token and its stored form.
func NewLoginLink() (token string, hash []byte) {
	t := randomToken()
	return t, hashToken(t)
}

// setCookie sets a console cookie; secure is Console.secure of the request.
func setCookie(w http.ResponseWriter, r *http.Request, secure bool, name, value string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/ui/", Expires: expires, HttpOnly: true,
		Secure: secure, SameSite: http.SameSiteStrictMode})
}

// clearCookie deletes a console cookie the request carries.
func clearCookie(w http.ResponseWriter, r *http.Request, secure bool, name string) {
	if _, err := r.Cookie(name); err != nil {
		return
	}
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/ui/", MaxAge: -1, HttpOnly: true,
		Secure: secure, SameSite: http.SameSiteStrictMode})
}
