package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/teammem"
)

// The server operators' routes (design §4.3), behind TEAMMEM_ADMIN_KEY.
// They act on whole orgs; the org admin plane in org.go acts inside one.

// adminOrgCreateRequest is the body of POST /v1/admin/orgs. Name defaults to
// the slug.
type adminOrgCreateRequest struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
}

// adminOrgCreateResponse is the 201 body of POST /v1/admin/orgs: the org and
// its owner's key, shown only this once.
type adminOrgCreateResponse struct {
	Org      teammem.Org `json:"org"`
	OwnerKey string      `json:"owner_key"`
}

// adminOrgPatchRequest is the body of PATCH /v1/admin/orgs/{slug}.
type adminOrgPatchRequest struct {
	Name *string `json:"name"`
	// Disabled orgs keep their data but every key of theirs is refused.
	Disabled *bool `json:"disabled"`
}

// adminOrgResponse is the body of PATCH /v1/admin/orgs/{slug}.
type adminOrgResponse struct {
	Org teammem.Org `json:"org"`
}

// serverAdmin is the principal audit events of server operators carry: the
// org acted on and no user.
func serverAdmin(org teammem.Org) teammem.Principal { return teammem.Principal{Org: org} }

// adminListOrgs serves GET /v1/admin/orgs.
func (s *Server) adminListOrgs(w http.ResponseWriter, r *http.Request) error {
	orgs, err := s.store.OrgList(r.Context())
	if err != nil {
		return err
	}
	for i := range orgs {
		orgs[i] = orgView(orgs[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"orgs": nonNil(orgs)})
	return nil
}

// adminCreateOrg serves POST /v1/admin/orgs: the org, its owner "admin" and
// the owner's key.
func (s *Server) adminCreateOrg(w http.ResponseWriter, r *http.Request) error {
	var body adminOrgCreateRequest
	if err := decodeStrictJSON(r, &body); err != nil {
		return err
	}
	// The slug first (CreateOrgWithOwner checks it too), so that a body
	// wrong in both is told of the slug.
	if err := teammem.ValidateOrgSlug(body.Slug); err != nil {
		return err
	}
	name, err := validateName("name", body.Name, false)
	if err != nil {
		return err
	}
	ctx := r.Context()
	org, key, err := teammem.CreateOrgWithOwner(ctx, s.store, teammem.NewOrg{Slug: body.Slug, Name: name, KeyName: "owner"})
	if err != nil {
		return err
	}
	s.audit(ctx, serverAdmin(org), "org.create", "", org.Slug, map[string]any{"by": "server_admin", "owner": teammem.OwnerHandle})
	writeJSON(w, http.StatusCreated, adminOrgCreateResponse{Org: orgView(org), OwnerKey: key})
	return nil
}

// adminPatchOrg serves PATCH /v1/admin/orgs/{slug}: rename, disable or
// enable an org. A disabled org's keys are refused (403) until it is enabled.
func (s *Server) adminPatchOrg(w http.ResponseWriter, r *http.Request) error {
	var body adminOrgPatchRequest
	if err := decodeStrictJSON(r, &body); err != nil {
		return err
	}
	upd := teammem.OrgUpdateParams{Disabled: body.Disabled}
	if body.Name != nil {
		name, err := validateName("name", *body.Name, true)
		if err != nil {
			return err
		}
		upd.Name = &name
	}
	ctx := r.Context()
	slug := chi.URLParam(r, "slug")
	org, err := s.store.OrgGetBySlug(ctx, slug)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return teammem.Errorf(teammem.ENotFound, "no org %q", slug)
	}
	if err != nil {
		return err
	}
	if upd.Name != nil || upd.Disabled != nil {
		if org, err = s.store.OrgUpdate(ctx, org.ID, upd); err != nil {
			return err
		}
		s.invalidateAuth(ctx, org.ID)
		s.audit(ctx, serverAdmin(org), "org.admin_update", "", org.Slug, map[string]any{"by": "server_admin",
			"name": org.Name, "disabled": org.Disabled})
	}
	writeJSON(w, http.StatusOK, adminOrgResponse{Org: orgView(org)})
	return nil
}
