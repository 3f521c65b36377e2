package httpapi

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// userCreateRequest is the body of POST /v1/org/users.
type userCreateRequest struct {
	Handle string       `json:"handle"`
	Role   teammem.Role `json:"role"`
}

// userPatchRequest is the body of PATCH /v1/org/users/{handle}; absent
// fields stay as they are.
type userPatchRequest struct {
	Role     *teammem.Role `json:"role"`
	Disabled *bool         `json:"disabled"`
}

// userResponse is the body of a created or changed user.
type userResponse struct {
	User teammem.User `json:"user"`
}

// listUsers serves GET /v1/org/users.
func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActUsersRead, false); err != nil {
		return err
	}
	users, err := s.store.UserList(r.Context(), p.Org.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": nonNil(users)})
	return nil
}

// createUser serves POST /v1/org/users. Only owners create owners and
// admins (canManageRole).
func (s *Server) createUser(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActUsersWrite, true); err != nil {
		return err
	}
	var body userCreateRequest
	if err := decodeStrictJSON(r, &body); err != nil {
		return err
	}
	if err := teammem.ValidateHandle(body.Handle); err != nil {
		return err
	}
	if err := checkRole(p, body.Role); err != nil {
		return err
	}
	u, err := s.store.UserCreate(r.Context(), p.Org.ID, teammem.UserCreateParams{Handle: body.Handle, Role: body.Role})
	if teammem.ErrorCode(err) == teammem.EConflict {
		return teammem.Errorf(teammem.EConflict, "user %q already exists", body.Handle)
	}
	if err != nil {
		return err
	}
	s.audit(r.Context(), p, "user.create", "", u.Handle, map[string]any{"role": u.Role})
	writeJSON(w, http.StatusCreated, userResponse{User: u})
	return nil
}

// checkRole reports why p may not grant role: it is unknown (EInvalid) or
// above what p manages (EForbidden).
func checkRole(p teammem.Principal, role teammem.Role) error {
	if !role.Valid() {
		return teammem.Errorf(teammem.EInvalid, "role must be owner, admin, member or viewer")
	}
	if !teammem.CanManageRole(p, role) {
		return teammem.Errorf(teammem.EForbidden, "role %s may not manage %s users", p.User.Role, role)
	}
	return nil
}

// patchUser serves PATCH /v1/org/users/{handle}: change a role or disable.
// The caller must manage both the user's current and new role, and the org
// keeps at least one active owner.
func (s *Server) patchUser(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActUsersWrite, true); err != nil {
		return err
	}
	var body userPatchRequest
	if err := decodeStrictJSON(r, &body); err != nil {
		return err
	}
	target, err := s.orgUser(r.Context(), p.Org.ID, chi.URLParam(r, "handle"))
	if err != nil {
		return err
	}
	if !teammem.CanManageRole(p, target.Role) {
		return teammem.Errorf(teammem.EForbidden, "role %s may not manage %s users", p.User.Role, target.Role)
	}
	if body.Role != nil {
		if err := checkRole(p, *body.Role); err != nil {
			return err
		}
	}
	if body.Role == nil && body.Disabled == nil {
		writeJSON(w, http.StatusOK, userResponse{User: target})
		return nil
	}
	if err := s.keepAnOwner(r.Context(), p.Org.ID, target, body); err != nil {
		return err
	}
	u, err := s.store.UserUpdate(r.Context(), p.Org.ID, target.ID, teammem.UserUpdateParams{Role: body.Role, Disabled: body.Disabled, KeepOwner: true})
	if err != nil {
		return err
	}
	s.invalidateAuth(r.Context(), p.Org.ID)
	s.audit(r.Context(), p, "user.update", "", u.Handle, map[string]any{"role": u.Role, "previous_role": target.Role,
		"disabled": u.Disabled, "previously_disabled": target.Disabled})
	writeJSON(w, http.StatusOK, userResponse{User: u})
	return nil
}

// orgUser finds a user of the org by handle, or by the "user_…" id the
// memory stores API names it by (ENotFound otherwise).
func (s *Server) orgUser(ctx context.Context, orgID int64, handle string) (teammem.User, error) {
	u, err := s.store.UserGetByHandle(ctx, orgID, handle)
	if id, ok := teammem.UserIDOf(handle); ok && teammem.ErrorCode(err) == teammem.ENotFound {
		// Not a handle: the "user_…" id the memory stores API names users by.
		u, err = s.store.UserGet(ctx, orgID, id)
	}
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return u, teammem.Errorf(teammem.ENotFound, "no user %q in this organization", handle)
	}
	return u, err
}

// keepAnOwner refuses (EConflict) a change that would leave the org without
// an active owner. Only owners may change owners, so the last active owner
// is the caller: they must name a successor first.
func (s *Server) keepAnOwner(ctx context.Context, orgID int64, target teammem.User, body userPatchRequest) error {
	if !(teammem.UserUpdateParams{Role: body.Role, Disabled: body.Disabled}).RemovesOwner(target) {
		return nil
	}
	users, err := s.store.UserList(ctx, orgID)
	if err != nil {
		return err
	}
	return teammem.OwnerKept(target, teammem.ActiveOwners(users, target.ID))
}
