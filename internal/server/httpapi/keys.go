package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// keyCreateRequest is the body of POST /v1/org/keys. User is a handle; empty
// means the caller.
type keyCreateRequest struct {
	// User is the handle of the key's owner; creating for anyone but
	// oneself needs keys.all and the right to manage their role.
	User string `json:"user"`
	// Name tells the key apart in listings (1-200 bytes).
	Name string `json:"name"`
	// ReadOnly keys are refused on every request that changes state.
	ReadOnly bool `json:"read_only"`
	// ExpiresAt is an RFC 3339 time in the future; null or absent: never.
	// A key made with an expiring key expires no later than that key:
	// absent means at the same time, and a later time is refused.
	ExpiresAt *string `json:"expires_at"`
}

// keyCreateResponse is the 201 body of POST /v1/org/keys: the only time the
// key itself is shown.
type keyCreateResponse struct {
	ID string `json:"id"`
	// Key is "tmk_<prefix>_<secret>"; the server keeps only its hash.
	Key string `json:"key"`
	// APIKey is the key's metadata as GET /v1/org/keys lists it.
	APIKey teammem.APIKey `json:"api_key"`
}

// keyResponse is the body of DELETE /v1/org/keys/{id}: the key's metadata
// with revoked_at set.
type keyResponse struct {
	APIKey teammem.APIKey `json:"api_key"`
}

// listKeys serves GET /v1/org/keys: every key of the org for callers allowed
// keys.all, else the caller's own. Never a secret.
func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActKeysOwn, false); err != nil {
		return err
	}
	f := teammem.KeyFilter{}
	if teammem.Authorize(p, teammem.ActKeysAll, false) != nil {
		f.UserID = p.User.ID
	}
	keys, err := s.store.KeyList(r.Context(), p.Org.ID, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": nonNil(keys)})
	return nil
}

// createKey serves POST /v1/org/keys: a key for the caller (keys.own) or,
// for callers allowed keys.all, for a user whose role they manage.
func (s *Server) createKey(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	var body keyCreateRequest
	if err := decodeStrictJSON(r, &body); err != nil {
		return err
	}
	target, err := s.keyOwner(r.Context(), p, body.User)
	if err != nil {
		return err
	}
	name, err := validateName("name", body.Name, true)
	if err != nil {
		return err
	}
	if err := s.refuseSecret(p.Org, "name", name); err != nil {
		return err
	}
	expires, err := parseExpiry(body.ExpiresAt, s.now())
	if err != nil {
		return err
	}
	if expires, err = boundExpiry(expires, p.Key); err != nil {
		return err
	}
	key, prefix := teammem.NewKeyString()
	k, err := s.store.KeyCreate(r.Context(), p.Org.ID, teammem.KeyCreateParams{UserID: target.ID, Name: name, Prefix: prefix,
		Hash: teammem.HashKey(key), ReadOnly: body.ReadOnly, ExpiresAt: expires, MaxActive: s.cfg.MaxKeysPerUser})
	if err != nil {
		return err
	}
	s.audit(r.Context(), p, "key.create", "", k.ID, map[string]any{"user": k.UserHandle, "name": k.Name,
		"read_only": k.ReadOnly, "expires_at": k.ExpiresAt})
	writeJSON(w, http.StatusCreated, keyCreateResponse{ID: k.ID, Key: key, APIKey: k})
	return nil
}

// boundExpiry keeps a new key from outliving the key that creates it, so
// that a key handed out for a day cannot mint one that lasts for ever: no
// expiry asked for means the creator's; a later one is refused.
func boundExpiry(expires *time.Time, creator teammem.APIKey) (*time.Time, error) {
	limit := creator.ExpiresAt
	switch {
	case limit == nil:
		return expires, nil
	case expires == nil:
		t := limit.UTC()
		return &t, nil
	case expires.After(*limit):
		return nil, teammem.Errorf(teammem.EInvalid, "expires_at must not be later than %s, when the key making this request expires",
			limit.UTC().Format(time.RFC3339))
	}
	return expires, nil
}

// parseExpiry parses a key's expires_at, which must be after now.
func parseExpiry(v *string, now time.Time) (*time.Time, error) {
	if v == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, *v)
	if err != nil {
		return nil, teammem.Errorf(teammem.EInvalid, "expires_at must be an RFC 3339 time such as 2030-01-02T15:04:05Z")
	}
	if !t.After(now) {
		return nil, teammem.Errorf(teammem.EInvalid, "expires_at must be in the future")
	}
	t = t.UTC()
	return &t, nil
}

// keyOwner authorises creating a key for the user with handle ("" or the
// caller's own handle: the caller) and returns that user.
func (s *Server) keyOwner(ctx context.Context, p teammem.Principal, handle string) (teammem.User, error) {
	if handle == "" || handle == p.User.Handle {
		return p.User, teammem.Authorize(p, teammem.ActKeysOwn, true)
	}
	if err := teammem.Authorize(p, teammem.ActKeysAll, true); err != nil {
		return teammem.User{}, err
	}
	u, err := s.orgUser(ctx, p.Org.ID, handle)
	switch {
	case err != nil:
		return u, err
	case !teammem.CanManageRole(p, u.Role):
		return u, teammem.Errorf(teammem.EForbidden, "role %s may not create keys for %s users", p.User.Role, u.Role)
	case u.Disabled:
		return u, teammem.Errorf(teammem.EInvalid, "user %q is disabled", handle)
	}
	return u, nil
}

// revokeKey serves DELETE /v1/org/keys/{id}: the caller's own key
// (keys.own) or, with keys.all, a key of a user whose role they manage.
// Keys of other orgs are not found. Revoking twice keeps the first time.
func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	id := teammem.KeyIDOf(chi.URLParam(r, "id")) // a key id, or its "apikey_…" actor id
	k, err := s.orgKey(r.Context(), p, id)
	if err != nil {
		return err
	}
	if k.UserID == p.User.ID {
		err = teammem.Authorize(p, teammem.ActKeysOwn, true)
	} else {
		err = s.mayManageKeysOf(r.Context(), p, k.UserID)
	}
	if err != nil {
		return err
	}
	revoked, err := s.store.KeyRevoke(r.Context(), p.Org.ID, id, time.Now())
	if err != nil {
		return err
	}
	s.invalidateAuth(r.Context(), p.Org.ID)
	if k.RevokedAt == nil {
		s.audit(r.Context(), p, "key.revoke", "", k.ID, map[string]any{"user": k.UserHandle, "name": k.Name})
	}
	writeJSON(w, http.StatusOK, keyResponse{APIKey: revoked})
	return nil
}

// orgKey finds a key of the caller's org; keys of other orgs are not found.
func (s *Server) orgKey(ctx context.Context, p teammem.Principal, id string) (teammem.APIKey, error) {
	// The store has no KeyGet; an org holds few keys.
	keys, err := s.store.KeyList(ctx, p.Org.ID, teammem.KeyFilter{})
	if err != nil {
		return teammem.APIKey{}, err
	}
	for _, k := range keys {
		if k.ID == id {
			return k, nil
		}
	}
	return teammem.APIKey{}, teammem.Errorf(teammem.ENotFound, "no key %q in this organization", id)
}

// mayManageKeysOf reports why p may not manage the keys of user userID.
func (s *Server) mayManageKeysOf(ctx context.Context, p teammem.Principal, userID int64) error {
	if err := teammem.Authorize(p, teammem.ActKeysAll, true); err != nil {
		return err
	}
	u, err := s.store.UserGet(ctx, p.Org.ID, userID)
	if err != nil {
		return err
	}
	if !teammem.CanManageRole(p, u.Role) {
		return teammem.Errorf(teammem.EForbidden, "role %s may not manage keys of %s users", p.User.Role, u.Role)
	}
	return nil
}
