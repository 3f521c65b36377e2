package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// The principals of the authorization matrix.
const (
	pNone     = "none"     // no key at all
	pRevoked  = "revoked"  // a member's revoked key
	pExpired  = "expired"  // a member's expired key
	pReadOnly = "readonly" // a member's read-only key
	pViewer   = "viewer"
	pMember   = "member"
	pAdmin    = "admin"
	pOwner    = "owner"
	pOther    = "other"  // the owner of another org
	pServer   = "server" // the server admin key
)

var principals = []string{pNone, pRevoked, pExpired, pReadOnly, pViewer, pMember, pAdmin, pOwner, pOther, pServer}

const (
	teamMarker     = "TEAM-MARKER-acme"
	personalMarker = "PERSONAL-MARKER-of-member"
)

// expect builds a principal → status map: base for every principal, then
// overrides in pairs.
func expect(base int, overrides ...any) map[string]int {
	m := map[string]int{}
	for _, p := range principals {
		m[p] = base
	}
	for i := 0; i+1 < len(overrides); i += 2 {
		m[overrides[i].(string)] = overrides[i+1].(int)
	}
	return m
}

// Shorthands for the common shapes of the matrix.
var (
	unauth = []any{pNone, 401, pRevoked, 401, pExpired, 401, pServer, 401}
	// teamRead: any role of acme reads; another org does not see acme's repo.
	teamRead = append(append([]any{}, unauth...), pOther, 404)
	// teamWrite: members and up write; viewers and read-only keys may not.
	teamWrite = append(append([]any{}, unauth...), pReadOnly, 403, pViewer, 403)
)

func with(base []any, more ...any) []any { return append(append([]any{}, base...), more...) }

type matrixRow struct {
	method, path, body string
	want               map[string]int
}

// matrixRows lists every route. {r} is the principal's own repo (acme/r-<p>),
// so that writes of one principal never change what another one sees, and
// {s} the principal's own API memory store of acme. Reads come before the
// writes that would change their answer.
func matrixRows() []matrixRow {
	v1 := "/v1/repos/acme/r-{p}"
	return []matrixRow{
		{"GET", "/healthz", "", expect(200)},
		{"GET", "/readyz", "", expect(200)},
		{"GET", "/metrics", "", expect(401)}, // only the metrics token opens it, no API or admin key
		{"GET", "/api/claude_code/team_memory?repo=acme/r-{p}", "", expect(200, teamRead...)},
		{"GET", "/api/claude_code/team_memory?repo=acme/r-{p}&view=hashes", "", expect(200, teamRead...)},
		{"GET", "/v1/me", "", expect(200, unauth...)},
		{"GET", "/v1/repos", "", expect(200, unauth...)},
		{"GET", v1, "", expect(200, teamRead...)},
		{"GET", v1 + "/team", "", expect(200, teamRead...)},
		{"GET", v1 + "/team/changes?since=0", "", expect(200, teamRead...)},
		{"GET", v1 + "/team/MEMORY.md", "", expect(200, teamRead...)},
		{"GET", v1 + "/team/export", "", expect(200, teamRead...)},
		{"GET", v1 + "/team/entries/a.md", "", expect(200, teamRead...)},
		{"GET", v1 + "/team/entries/a.md/history", "", expect(200, teamRead...)},
		{"GET", v1 + "/personal", "", expect(200, with(teamRead, pViewer, 403)...)},
		{"GET", v1 + "/personal/entries/p.md", "", expect(404, with(unauth, pViewer, 403, pMember, 200, pReadOnly, 200)...)},
		{"GET", v1 + "/personal/entries/p.md/history", "", expect(404, with(unauth, pViewer, 403, pMember, 200, pReadOnly, 200)...)},
		{"GET", "/v1/org", "", expect(200, unauth...)},
		{"GET", "/v1/org/users", "", expect(403, with(unauth, pAdmin, 200, pOwner, 200, pOther, 200)...)},
		{"GET", "/v1/org/keys", "", expect(200, unauth...)},
		{"GET", "/v1/org/audit", "", expect(403, with(unauth, pAdmin, 200, pOwner, 200, pOther, 200)...)},
		{"POST", "/v1/telemetry/events", `{"events":[{"name":"teammem_dream_skipped","fields":{"reason":"time"}}]}`, expect(202, unauth...)},
		{"GET", "/v1/admin/orgs", "", expect(403, pNone, 401, pServer, 200)},
		{"POST", "/v1/admin/orgs", `{"slug":"made-by-{p}"}`, expect(403, pNone, 401, pServer, 201)},
		{"PATCH", "/v1/admin/orgs/acme", `{"name":"Acme"}`, expect(403, pNone, 401, pServer, 200)},
		// Writes.
		{"PUT", "/api/claude_code/team_memory?repo=acme/r-{p}", `{"entries":{"new-{p}.md":"from {p}"}}`, expect(200, teamWrite...)},
		{"PUT", v1 + "/team/entries/b.md", "b", expect(200, teamWrite...)},
		{"POST", v1 + "/team/batch", `{"upserts":[{"key":"c.md","content":"c"}]}`, expect(200, teamWrite...)},
		{"PUT", v1 + "/personal/entries/q.md", "q", expect(200, with(teamWrite, pOther, 200)...)},
		{"POST", v1 + "/team/entries/a.md/restore", `{"version":1}`, expect(403, with(unauth, pAdmin, 200, pOwner, 200, pOther, 404)...)},
		{"DELETE", v1 + "/personal/entries/p.md", "", expect(404, with(teamWrite, pMember, 204, pOther, 404)...)},
		{"DELETE", v1 + "/team/entries/a.md", "", expect(204, with(teamWrite, pOther, 404)...)},
		// Redacting needs the entry's content no longer live: after the deletes above.
		{"POST", v1 + "/team/entries/a.md/history/1/redact", "", expect(403, with(unauth, pAdmin, 200, pOwner, 200, pOther, 404)...)},
		{"POST", v1 + "/personal/entries/p.md/history/1/redact", "", expect(404, with(teamWrite, pMember, 200, pOther, 404)...)},
		{"PATCH", "/v1/org", `{"name":"Acme by {p}"}`, expect(403, with(unauth, pAdmin, 200, pOwner, 200, pOther, 200)...)},
		{"POST", "/v1/org/users", `{"handle":"new-{p}","role":"member"}`, expect(403, with(unauth, pAdmin, 201, pOwner, 201, pOther, 201)...)},
		{"POST", "/v1/org/keys", `{"name":"k-{p}"}`, expect(201, with(unauth, pReadOnly, 403)...)},
		{"DELETE", v1 + "/team", "", expect(403, with(unauth, pAdmin, 200, pOwner, 200, pOther, 200)...)},
		{"DELETE", v1 + "/team?purge=history", "", expect(403, with(unauth, pAdmin, 200, pOwner, 200, pOther, 200)...)},
		// Memory stores: reading and writing an API store takes the team
		// roles; archiving (which cannot be undone) and deleting take
		// moderation; another org does not see acme's stores.
		{"GET", "/v1/memory_stores/{s}?beta=true", "", expect(200, teamRead...)},
		{"POST", "/v1/memory_stores?beta=true", `{"name":"made by {p}"}`, expect(200, with(teamWrite, pOther, 200)...)},
		{"POST", "/v1/memory_stores/{s}?beta=true", `{"name":"renamed by {p}"}`, expect(200, with(teamWrite, pOther, 404)...)},
		{"POST", "/v1/memory_stores/{s}/memories?beta=true", `{"path":"/by-{p}.md","content":"x"}`, expect(200, with(teamWrite, pOther, 404)...)},
		{"POST", "/v1/memory_stores/{s}/archive?beta=true", "", expect(403, with(unauth, pAdmin, 200, pOwner, 200, pOther, 404)...)},
		{"DELETE", "/v1/memory_stores/{s}?beta=true", "", expect(403, with(unauth, pAdmin, 200, pOwner, 200, pOther, 404)...)},
	}
}

// TestAuthorizationMatrix sends every route as every principal and checks
// the status, and that no answer carries another org's data or another
// user's personal memory.
func TestAuthorizationMatrix(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, func(c *httpapi.Config) { c.AdminKey = testAdminKey; c.WriteRate = 0 })
		ctx := context.Background()
		keys := map[string]string{pNone: "", pServer: testAdminKey}
		for _, r := range []teammem.Role{teammem.RoleViewer, teammem.RoleMember, teammem.RoleAdmin, teammem.RoleOwner} {
			keys[string(r)] = e.keys[r]
		}
		member := e.users[teammem.RoleMember]
		keys[pReadOnly] = MustExtraKey(t, st, e.org, member, true)
		revoked, prefix := teammem.NewKeyString()
		k, err := st.KeyCreate(ctx, e.org.ID, teammem.KeyCreateParams{UserID: member.ID, Name: "revoked", Prefix: prefix, Hash: teammem.HashKey(revoked)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.KeyRevoke(ctx, e.org.ID, k.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
		keys[pRevoked] = revoked
		expired, prefix := teammem.NewKeyString()
		past := time.Now().Add(-time.Hour)
		if _, err := st.KeyCreate(ctx, e.org.ID, teammem.KeyCreateParams{UserID: member.ID, Name: "expired", Prefix: prefix, Hash: teammem.HashKey(expired), ExpiresAt: &past}); err != nil {
			t.Fatal(err)
		}
		keys[pExpired] = expired
		other := MustOrg(t, st, "evil", teammem.OrgSettings{})
		_, keys[pOther] = MustUserKey(t, st, other, "mallory", teammem.RoleOwner)

		// Every principal gets its own acme repo with team and personal
		// data, and its own API store.
		stores := map[string]string{}
		for _, p := range principals {
			stores[p] = e.do("POST", "/v1/memory_stores?beta=true", e.keys[teammem.RoleOwner], map[string]any{"name": "store of " + p}).
				want(t, 200).JSON(t)["id"].(string)
			repo := "/v1/repos/acme/r-" + p
			e.do("PUT", repo+"/team/entries/a.md", e.keys[teammem.RoleOwner], teamMarker).want(t, 200)
			e.do("PUT", repo+"/team/entries/MEMORY.md", e.keys[teammem.RoleOwner], "- [a](a.md) — "+teamMarker+"\n").want(t, 200)
			e.do("PUT", repo+"/personal/entries/p.md", e.keys[teammem.RoleMember], personalMarker).want(t, 200)
		}

		for _, row := range matrixRows() {
			for _, p := range principals {
				path := strings.ReplaceAll(strings.ReplaceAll(row.path, "{p}", p), "{s}", stores[p])
				body := strings.ReplaceAll(row.body, "{p}", p)
				var b any
				if body != "" {
					b = body
				}
				got := e.do(row.method, path, keys[p], b, "Content-Type", "application/json")
				if want := row.want[p]; got.Status != want {
					t.Errorf("%s %s as %s = %d, want %d: %.200s", row.method, row.path, p, got.Status, want, got.Body)
				}
				text := string(got.Body)
				if p == pOther && strings.Contains(text, teamMarker) {
					t.Errorf("%s %s as another org's owner leaked acme's team memory", row.method, row.path)
				}
				if p != pMember && p != pReadOnly && strings.Contains(text, personalMarker) {
					t.Errorf("%s %s as %s leaked the member's personal memory", row.method, row.path, p)
				}
				if got.Status == http.StatusUnauthorized && got.Header.Get("WWW-Authenticate") == "" {
					t.Errorf("%s %s as %s: 401 without WWW-Authenticate", row.method, row.path, p)
				}
			}
		}
		// Events: readers of acme stream; the stream never shows personal
		// events of another user.
		for _, p := range []string{pViewer, pAdmin, pOther} {
			s := e.stream(t, keys[p], "")
			s.next(t)
		}
		for _, p := range []string{pNone, pRevoked, pExpired, pServer} {
			e.do("GET", "/v1/repos/acme/widgets/events", keys[p], nil).want(t, 401)
		}
		// Another org's writes never reached acme.
		if g := e.do("GET", "/v1/repos/acme/r-owner/team/entries/new-other.md", e.keys[teammem.RoleOwner], nil); g.Status != 404 {
			t.Errorf("another org's write landed in acme: %d", g.Status)
		}
	})
}
