package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/secrettest"
)

// Claude Code sessions of the session tests, and their sesn_ ids.
const (
	ccAlice  = "11111111-1111-4111-8111-111111111111"
	ccBob    = "22222222-2222-4222-8222-222222222222"
	ccShared = "33333333-3333-4333-8333-333333333333" // writes in both orgs
	ccNotes  = "44444444-4444-4444-8444-444444444444"
)

func sesn(cc string) string { return "sesn_" + strings.ReplaceAll(cc, "-", "") }

// sessionsListed lists, through the Go SDK one session a page, the ids a
// key sees.
func sessionsListed(t *testing.T, e *v1Env, key string) string {
	t.Helper()
	var ids []string
	iter := sdkClient(e, key).Beta.Sessions.ListAutoPaging(t.Context(), anthropic.BetaSessionListParams{Limit: anthropic.Int(1)})
	for iter.Next() {
		ids = append(ids, iter.Current().ID)
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(ids, ",")
}

// TestSessionsVisibility checks on both drivers who sees which session: a
// session that wrote a team space is every org member's, one that wrote
// only a personal space its user's, one id that wrote in two orgs shows
// each org only its own spaces, and everything else is a 404 exactly like
// an unknown id, through the SDK and raw.
func TestSessionsVisibility(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		alice, viewer, owner := e.keys[teammem.RoleMember], e.keys[teammem.RoleViewer], e.keys[teammem.RoleOwner]
		_, bob := MustUserKey(t, st, e.org, "bob", teammem.RoleMember)
		other := MustOrg(t, st, "other", teammem.OrgSettings{})
		_, eve := MustUserKey(t, st, other, "eve", teammem.RoleOwner)
		put := func(key, space, path, cc string) {
			e.do("PUT", "/v1/repos/acme/widgets/"+space+"/entries/"+path, key, "memory of "+path+"\n", "X-Claude-Code-Session-Id", cc).want(t, 200)
		}
		put(alice, "team", "a.md", ccAlice)
		put(bob, "personal", "bob.md", ccBob)
		put(alice, "team", "shared.md", ccShared)
		put(eve, "team", "eve.md", ccShared)
		put(alice, "team", "anon.md", "not-a-uuid")

		for who, c := range map[string]struct{ key, want string }{
			"alice":  {alice, sesn(ccShared) + "," + sesn(ccAlice)},
			"bob":    {bob, sesn(ccShared) + "," + sesn(ccBob) + "," + sesn(ccAlice)},
			"viewer": {viewer, sesn(ccShared) + "," + sesn(ccAlice)},
			"owner":  {owner, sesn(ccShared) + "," + sesn(ccAlice)},
			"eve":    {eve, sesn(ccShared)},
		} {
			if got := sessionsListed(t, e, c.key); got != c.want {
				t.Errorf("%s lists %s, want %s", who, got, c.want)
			}
		}
		// The shared id: each org sees its own writes only.
		s := e.do("GET", "/v1/sessions/"+sesn(ccShared), eve, nil).want(t, 200).JSON(t)
		spaces := s["teammem"].(map[string]any)["spaces"].([]any)
		if len(spaces) != 1 || s["metadata"].(map[string]any)["repos"] != "acme/widgets" || s["type"] != "session" || s["status"] != "idle" {
			t.Fatalf("eve's view of the shared session = %v", s)
		}
		got, err := sdkClient(e, alice).Beta.Sessions.Get(t.Context(), sesn(ccAlice), anthropic.BetaSessionGetParams{})
		if err != nil || got.ID != sesn(ccAlice) || got.Metadata["claude_code_session_id"] != ccAlice || got.CreatedAt.IsZero() {
			t.Fatalf("SDK get = %+v, %v", got, err)
		}
		unknown := e.do("GET", "/v1/sessions/"+sesn(ccNotes), alice, nil).want(t, 404).Body
		for who, c := range map[string]struct{ key, id string }{
			"alice, bob's personal session": {alice, sesn(ccBob)},
			"owner, bob's personal session": {owner, sesn(ccBob)},
			"eve, alice's session":          {eve, sesn(ccAlice)},
			"eve, bob's session":            {eve, sesn(ccBob)},
			"alice, a longer id":            {alice, sesn(ccAlice) + "0"},
			"alice, the bare UUID":          {alice, ccAlice},
		} {
			r := e.do("GET", "/v1/sessions/"+c.id, c.key, nil).want(t, 404)
			if strings.ReplaceAll(string(r.Body), c.id, sesn(ccNotes)) != string(unknown) && !strings.Contains(string(r.Body), `"not_found_error"`) {
				t.Errorf("%s: %s, unlike an unknown session's %s", who, r.Body, unknown)
			}
			_, err := sdkClient(e, c.key).Beta.Sessions.Get(t.Context(), c.id, anthropic.BetaSessionGetParams{})
			wantStatus(t, who, err, http.StatusNotFound)
		}
		e.do("GET", "/v1/sessions?page=bogus", alice, nil).want(t, 400)
		e.do("GET", "/v1/sessions?limit=0", alice, nil).want(t, 400)
	})
}

// TestSessionNotes checks the notes upload: it needs a team writer, it is
// secret-scanned (a secret refuses it with the rule id, storing nothing),
// capped, replaces earlier notes, and makes the session visible to the
// team without showing the uploader's personal space.
func TestSessionNotes(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newStoreEnv(t, st, teammem.OrgSettings{})
		alice, viewer := e.keys[teammem.RoleOwner], e.keys[teammem.RoleViewer]
		_, bob := MustUserKey(t, st, e.org, "bob", teammem.RoleMember)
		e.do("PUT", "/v1/repos/acme/widgets/personal/entries/mine.md", bob, "bob's own\n", "X-Claude-Code-Session-Id", ccNotes).want(t, 200)
		path := "/v1/sessions/" + sesn(ccNotes) + "/notes"
		notes := func(key string, body any, status int) resp {
			t.Helper()
			return e.do("PUT", path, key, body).want(t, status)
		}

		ghp := secrettest.Token("github-pat")
		r := notes(bob, map[string]string{"repo": "acme/widgets", "content": "we decided\n" + ghp + "\n"}, 400)
		noSecret(t, "the refusal", r.Body, ghp)
		if !strings.Contains(string(r.Body), `"rule_ids":["github-pat"]`) || !strings.Contains(string(r.Body), "invalid_request_error") {
			t.Fatalf("secret refusal = %s", r.Body)
		}
		e.do("GET", "/v1/sessions/"+sesn(ccNotes), alice, nil).want(t, 404) // nothing stored
		r = notes(bob, map[string]string{"repo": "acme/widgets", "content": strings.Repeat("x", teammem.SessionNotesMaxBytes+1)}, 400)
		if !strings.Contains(string(r.Body), "65536") {
			t.Fatalf("cap refusal = %s", r.Body)
		}
		notes(viewer, map[string]string{"repo": "acme/widgets", "content": "hi"}, 403)
		notes(bob, map[string]string{"content": "no repo"}, 400)
		notes(bob, map[string]string{"repo": "not a repo", "content": "x"}, 400)
		e.do("PUT", "/v1/sessions/sesn_nothex/notes", bob, map[string]string{"repo": "acme/widgets", "content": "x"}).want(t, 400)
		e.do("GET", "/v1/sessions/"+sesn(ccNotes), alice, nil).want(t, 404)

		notes(bob, map[string]string{"repo": "acme/widgets", "content": "first"}, 200)
		s := notes(bob, map[string]string{"repo": "acme/widgets", "content": "we decided to use sqlite\n"}, 200).JSON(t)
		if s["status"] != "terminated" || len(s["teammem"].(map[string]any)["spaces"].([]any)) != 2 {
			t.Fatalf("bob's view after the upload = %v", s)
		}
		s = e.do("GET", "/v1/sessions/"+sesn(ccNotes), alice, nil).want(t, 200).JSON(t)
		ext := s["teammem"].(map[string]any)
		if sp := ext["spaces"].([]any); len(sp) != 1 || sp[0].(map[string]any)["scope"] != "team" ||
			ext["notes_size_bytes"] != float64(len("we decided to use sqlite\n")) {
			t.Fatalf("alice's view = %v", s)
		}
		text, err := teammem.SessionMaterial(t.Context(), st, e.org.ID, sesn(ccNotes))
		if err != nil || !strings.Contains(text, "we decided to use sqlite") || strings.Contains(text, "first") || strings.Contains(text, "bob's own") {
			t.Fatalf("material = %q, %v", text, err)
		}
	})
}
