package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// users serves /ui/users: GET /v1/org/users, with the forms of
// POST /v1/org/users and PATCH /v1/org/users/{handle}.
func (c *Console) users(w http.ResponseWriter, r *http.Request, v *viewer) error {
	var body struct {
		Users []teammem.User `json:"users"`
	}
	if err := c.api(v).get(r.Context(), "/v1/org/users", &body); err != nil {
		return err
	}
	type row struct {
		teammem.User
		CanManage bool
	}
	rows := make([]row, 0, len(body.Users))
	canWrite := v.can(teammem.ActUsersWrite, true)
	for _, u := range body.Users {
		rows = append(rows, row{User: u, CanManage: canWrite && teammem.CanManageRole(v.p, u.Role) && u.Handle != v.p.User.Handle})
	}
	c.render(w, r, v, http.StatusOK, "users", "Users", struct {
		Users    []row
		CanWrite bool
		Roles    []teammem.Role
	}{rows, canWrite, grantable(v.p)})
	return nil
}

// grantable lists the roles p may give.
func grantable(p teammem.Principal) []teammem.Role {
	var out []teammem.Role
	for _, r := range []teammem.Role{teammem.RoleViewer, teammem.RoleMember, teammem.RoleAdmin, teammem.RoleOwner} {
		if teammem.CanManageRole(p, r) {
			out = append(out, r)
		}
	}
	return out
}

// createUser serves POST /ui/users.
func (c *Console) createUser(w http.ResponseWriter, r *http.Request, v *viewer) error {
	in := map[string]any{"handle": strings.TrimSpace(r.PostFormValue("handle")), "role": r.PostFormValue("role")}
	if err := c.api(v).do(r.Context(), http.MethodPost, "/v1/org/users", in, nil); err != nil {
		return err
	}
	http.Redirect(w, r, "/ui/users?done=user", http.StatusSeeOther)
	return nil
}

// updateUser serves POST /ui/users/update: a new role, or disable/enable.
func (c *Console) updateUser(w http.ResponseWriter, r *http.Request, v *viewer) error {
	in := map[string]any{}
	if role := r.PostFormValue("role"); role != "" {
		in["role"] = role
	}
	switch r.PostFormValue("disabled") {
	case "true":
		in["disabled"] = true
	case "false":
		in["disabled"] = false
	}
	path := "/v1/org/users/" + url.PathEscape(r.PostFormValue("handle"))
	if err := c.api(v).do(r.Context(), http.MethodPatch, path, in, nil); err != nil {
		return err
	}
	http.Redirect(w, r, "/ui/users?done=user", http.StatusSeeOther)
	return nil
}

// keysPage is the data of /ui/keys.
type keysPage struct {
	Keys    []keyRow
	AllKeys bool
	NewKey  string // shown once, right after creation
	Users   []string
}

type keyRow struct {
	teammem.APIKey
	Current bool // the key this session signed in with
}

// keys serves /ui/keys: GET /v1/org/keys (every key for admins, one's own
// otherwise).
func (c *Console) keys(w http.ResponseWriter, r *http.Request, v *viewer) error {
	return c.renderKeys(w, r, v, http.StatusOK, "")
}

func (c *Console) renderKeys(w http.ResponseWriter, r *http.Request, v *viewer, status int, newKey string) error {
	var body struct {
		Keys []teammem.APIKey `json:"keys"`
	}
	if err := c.api(v).get(r.Context(), "/v1/org/keys", &body); err != nil {
		return err
	}
	pg := keysPage{AllKeys: v.can(teammem.ActKeysAll, true), NewKey: newKey}
	for _, k := range body.Keys {
		pg.Keys = append(pg.Keys, keyRow{APIKey: k, Current: k.ID == v.p.Key.ID})
	}
	if pg.AllKeys {
		var users struct {
			Users []teammem.User `json:"users"`
		}
		if err := c.api(v).get(r.Context(), "/v1/org/users", &users); err == nil {
			for _, u := range users.Users {
				if !u.Disabled && teammem.CanManageRole(v.p, u.Role) {
					pg.Users = append(pg.Users, u.Handle)
				}
			}
		}
	}
	c.render(w, r, v, status, "keys", "Keys", pg)
	return nil
}

// createKey serves POST /ui/keys: POST /v1/org/keys, then the key, once.
func (c *Console) createKey(w http.ResponseWriter, r *http.Request, v *viewer) error {
	in := map[string]any{"name": r.PostFormValue("name"), "user": r.PostFormValue("user"), "read_only": r.PostFormValue("read_only") == "on"}
	if e := strings.TrimSpace(r.PostFormValue("expires_at")); e != "" {
		in["expires_at"] = e
	}
	var out struct {
		Key string `json:"key"`
	}
	if err := c.api(v).do(r.Context(), http.MethodPost, "/v1/org/keys", in, &out); err != nil {
		return err
	}
	// Rendered, not redirected: the key must not travel in a URL.
	return c.renderKeys(w, r, v, http.StatusCreated, out.Key)
}

// revokeKey serves POST /ui/keys/revoke: DELETE /v1/org/keys/{id}.
func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request, v *viewer) error {
	if err := c.api(v).do(r.Context(), http.MethodDelete, "/v1/org/keys/"+url.PathEscape(r.PostFormValue("id")), nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, "/ui/keys?done=revoked", http.StatusSeeOther)
	return nil
}

// audit serves /ui/audit: GET /v1/org/audit with the form's filters.
func (c *Console) audit(w http.ResponseWriter, r *http.Request, v *viewer) error {
	q := r.URL.Query()
	f := url.Values{}
	for _, k := range []string{"actor", "repo", "action", "before"} {
		if val := strings.TrimSpace(q.Get(k)); val != "" {
			f.Set(k, val)
		}
	}
	f.Set("limit", "100")
	var body struct {
		Events []teammem.AuditEvent `json:"events"`
		Next   *int64               `json:"next_before"`
	}
	if err := c.api(v).get(r.Context(), "/v1/org/audit?"+f.Encode(), &body); err != nil {
		return err
	}
	next := ""
	if body.Next != nil {
		f.Del("limit")
		f.Set("before", strconv.FormatInt(*body.Next, 10))
		next = "/ui/audit?" + f.Encode()
	}
	c.render(w, r, v, http.StatusOK, "audit", "Audit log", struct {
		Events              []teammem.AuditEvent
		Actor, Repo, Action string
		Next                string
	}{body.Events, q.Get("actor"), q.Get("repo"), q.Get("action"), next})
	return nil
}
