package httpapi

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// apiKeyFrom returns the key a request carries in "Authorization: Bearer" or
// "x-api-key".
func apiKeyFrom(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if scheme, rest, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(rest)
		}
	}
	return strings.TrimSpace(r.Header.Get("x-api-key"))
}

// authenticate resolves the request's key to a usable principal.
func (s *Server) authenticate(r *http.Request) (teammem.Principal, error) {
	key := apiKeyFrom(r)
	if key == "" {
		return teammem.Principal{}, teammem.Errorf(teammem.EUnauthorized, "an API key is required (Authorization: Bearer <key> or x-api-key)")
	}
	now := s.now()
	p, err := s.lookupKey(r.Context(), keyHash(key), now, false)
	if err != nil {
		return p, err
	}
	s.touch.mark(p.Key.ID, now)
	return p, nil
}

// keyHash is the SHA-256 of a key string, the form keys are looked up by.
func keyHash(key string) [32]byte {
	var hash [32]byte
	copy(hash[:], teammem.HashKey(key))
	return hash
}

// lookupKey resolves a key hash to its principal and checks that it may be
// used at now. fresh skips the cache (and refreshes it), for callers that
// must see a change made on another replica whose invalidation may not have
// arrived: an open event stream re-checking its key.
func (s *Server) lookupKey(ctx context.Context, hash [32]byte, now time.Time, fresh bool) (teammem.Principal, error) {
	var p teammem.Principal
	ok := false
	if !fresh {
		p, ok = s.cache.principal(hash, now)
	}
	if !ok {
		var err error
		p, err = s.store.KeyLookup(ctx, hash[:])
		switch teammem.ErrorCode(err) {
		case "":
			s.cache.putPrincipal(hash, p, now)
		case teammem.ENotFound:
			return p, refusalError(wire.RefusedKeyUnknown)
		default:
			return p, err
		}
	}
	if reason := refusalOf(p, now); reason != "" {
		return p, refusalError(reason)
	}
	return p, nil
}

// refusalOf returns why p's key may not be used at now (a wire.Refused or
// wire.Forbidden reason), or "" when it may.
func refusalOf(p teammem.Principal, now time.Time) string {
	switch {
	case p.Key.RevokedAt != nil:
		return wire.RefusedKeyRevoked
	case p.Key.ExpiresAt != nil && !now.Before(*p.Key.ExpiresAt):
		return wire.RefusedKeyExpired
	case p.Org.Disabled:
		return wire.ForbiddenOrgDisabled
	case p.User.Disabled:
		return wire.ForbiddenUserDisabled
	}
	return ""
}

// refusalError is the error of a key refused for reason: 401 for the key
// itself, 403 (with the reason in details) for its user or org.
func refusalError(reason string) error {
	switch reason {
	case wire.RefusedKeyUnknown:
		return teammem.Errorf(teammem.EUnauthorized, "the API key is not valid")
	case wire.RefusedKeyRevoked:
		return teammem.Errorf(teammem.EUnauthorized, "the API key was revoked")
	case wire.RefusedKeyExpired:
		return teammem.Errorf(teammem.EUnauthorized, "the API key expired")
	case wire.ForbiddenOrgDisabled:
		return teammem.Errorf(teammem.EForbidden, "the organization is disabled").
			WithDetails(wire.ForbiddenDetails{Reason: wire.ForbiddenOrgDisabled}.Map())
	default:
		return teammem.Errorf(teammem.EForbidden, "the user is disabled").
			WithDetails(wire.ForbiddenDetails{Reason: wire.ForbiddenUserDisabled}.Map())
	}
}

// requireKey is middleware that admits only requests with a usable key and
// puts the principal in the request context.
func (s *Server) requireKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c := reqContextOf(r.Context()); c != nil && c.inProcess {
			next.ServeHTTP(w, r) // the console's own call, as its signed-in key
			return
		}
		p, err := s.authenticate(r)
		if err != nil {
			s.fail(w, r, err, s.writeError)
			return
		}
		// observe gave every request its context; the caller goes there,
		// with no new context layer and no copy of the request.
		if c := reqContextOf(r.Context()); c != nil {
			c.caller = p
		}
		s.metrics.InitOrg(p.Org.Slug) // an org made since the last listing (initOrgMetrics) starts at 0 too
		next.ServeHTTP(w, r)
	})
}

// requireAdminKey admits only requests carrying TEAMMEM_ADMIN_KEY; with no
// admin key configured the server admin routes are closed.
func (s *Server) requireAdminKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := apiKeyFrom(r)
		switch {
		case s.cfg.AdminKey == "":
			s.writeError(w, r, teammem.Errorf(teammem.EForbidden, "server administration is disabled (TEAMMEM_ADMIN_KEY is not set)"))
		case key == "":
			s.writeError(w, r, teammem.Errorf(teammem.EUnauthorized, "the server admin key is required"))
		case subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.AdminKey)) != 1:
			s.writeError(w, r, teammem.Errorf(teammem.EForbidden, "this route needs the server admin key"))
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// principal returns the authenticated caller; requireKey guarantees one.
// Without one it is the zero Principal, whom authorize refuses everything.
func principal(r *http.Request) teammem.Principal {
	if c := reqContextOf(r.Context()); c != nil {
		return c.caller
	}
	return teammem.Principal{}
}

// keyToucher coalesces last-used times so a request never waits on a write;
// they are flushed periodically and at shutdown.
type keyToucher struct {
	mu   sync.Mutex
	used map[string]time.Time
}

func (k *keyToucher) mark(id string, at time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.used == nil {
		k.used = make(map[string]time.Time)
	}
	k.used[id] = at
}

func (k *keyToucher) take() map[string]time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	u := k.used
	k.used = nil
	return u
}

// clientID names the client of a request for entry authorship.
func clientID(r *http.Request) string {
	id := r.Header.Get("X-Teammem-Client")
	if id == "" {
		id = r.UserAgent()
	}
	if len(id) > 120 {
		id = id[:120]
	}
	return strings.ToValidUTF8(id, "")
}
