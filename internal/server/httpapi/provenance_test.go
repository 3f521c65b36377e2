package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// sessionHdr is the header each dialect's write sends in the provenance tests.
const sessionHdr = "X-Claude-Code-Session-Id"

// TestProvenanceMatchesSpec writes through every dialect with a Claude
// Code session id and checks that each version's history row names the
// user, the key, the client, the dialect and the session, validated
// against api/openapi.yaml.
func TestProvenanceMatchesSpec(t *testing.T) {
	t.Parallel()
	b, k := setupV1(t, testConfig(), nil)
	ua := hdr("User-Agent", "claude-cli/2.1.332 (external, sdk-cli)")
	with := func(h map[string]string, kv ...string) map[string]string {
		out := hdr(kv...)
		for name, v := range h {
			out[name] = v
		}
		return out
	}
	// legacy PUT
	b.do(t, call{Method: http.MethodPut, Path: "/api/claude_code/team_memory?repo=acme/widgets", Key: k.member,
		Body: `{"entries":{"legacy.md":"legacy\n"}}`, Header: with(ua, sessionHdr, "sess-legacy"), Want: 200})
	// /v1: one entry, then a batch
	b.do(t, call{Method: http.MethodPut, Path: v1Team + "/entries/v1.md", Key: k.member, Body: "v1\n",
		Header: with(markdown, sessionHdr, "sess-v1", "X-Teammem-Client", "teammem/test"), Want: 200})
	b.do(t, call{Method: http.MethodPost, Path: v1Team + "/batch", Key: k.member,
		Body: `{"upserts":[{"key":"batch.md","content":"batch\n","base":null}]}`, Header: hdr(sessionHdr, "sess-batch"), Want: 200})
	// memory stores: Claude Code's dialect (not_exists) and the public API (beta=true)
	r := b.do(t, call{Method: http.MethodPost, Path: v1Team + "/memory_store", Key: k.member, Want: 200})
	var ms struct{ Path string }
	mustJSON(t, r.Body, &ms)
	b.do(t, call{Method: http.MethodPost, Path: ms.Path + "/memories", Key: k.member,
		Body: `{"path":"/cc.md","content":"cc\n","precondition":{"type":"not_exists"}}`, Header: with(ua, sessionHdr, "sess-cc"), Want: 200})
	b.do(t, call{Method: http.MethodPost, Path: ms.Path + "/memories?beta=true", Key: k.member,
		Body: `{"path":"/sdk.md","content":"sdk\n"}`, Header: hdr(sessionHdr, "sess-sdk"), Want: 200})
	// no header, and a header with a control character: no session
	b.do(t, call{Method: http.MethodPut, Path: v1Team + "/entries/none.md", Key: k.member, Body: "none\n", Header: markdown, Want: 200})
	b.do(t, call{Method: http.MethodPut, Path: v1Team + "/entries/ctl.md", Key: k.member, Body: "ctl\n",
		Header: with(markdown, sessionHdr, "a\tb"), Want: 200})

	for _, c := range []struct{ key, api, session, client string }{
		{"legacy.md", "claude_code", "sess-legacy", "claude-cli/2.1.332 (external, sdk-cli)"},
		{"v1.md", "v1", "sess-v1", "teammem/test"},
		{"batch.md", "v1", "sess-batch", ""},
		{"cc.md", "claude_code_memory", "sess-cc", "claude-cli/2.1.332 (external, sdk-cli)"},
		{"sdk.md", "memory_stores", "sess-sdk", ""},
		{"none.md", "v1", "", ""},
		{"ctl.md", "v1", "", ""},
	} {
		r := b.do(t, call{Method: http.MethodGet, Path: v1Team + "/entries/" + c.key + "/history", Key: k.viewer, Want: 200})
		var h wire.History
		mustJSON(t, r.Body, &h)
		v := h.Versions[0]
		if v.Author != "member" || v.KeyID == "" || v.KeyName != "member" || v.API != c.api || v.SessionID != c.session {
			t.Errorf("%s: provenance = author %q key %q (%q) api %q session %q; want member, member, %s, %q",
				c.key, v.Author, v.KeyID, v.KeyName, v.API, v.SessionID, c.api, c.session)
		}
		if c.client != "" && v.ClientID != c.client {
			t.Errorf("%s: client = %q, want %q", c.key, v.ClientID, c.client)
		}
		if c.session == "" && strings.Contains(string(r.Body), `"session_id"`) {
			t.Errorf("%s: history has a session_id: %s", c.key, r.Body)
		}
	}
}

// TestProvenanceOnBothDrivers: the key's id and name and the session id
// come back from the history on SQLite and Postgres, and an approved
// proposal's version names its author and the dialect it came through.
func TestProvenanceOnBothDrivers(t *testing.T) {
	t.Parallel()
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		owner, member, admin := e.keys[teammem.RoleOwner], e.keys[teammem.RoleMember], e.keys[teammem.RoleAdmin]
		team := "/v1/repos/acme/app/team"
		e.do(http.MethodPut, team+"/entries/a.md", member, "a\n", sessionHdr, "s-1").want(t, 200)
		var h wire.History
		mustJSON(t, e.do(http.MethodGet, team+"/entries/a.md/history", member, nil).want(t, 200).Body, &h)
		if v := h.Versions[0]; v.KeyName != "member" || v.KeyID == "" || v.SessionID != "s-1" || v.API != "v1" {
			t.Fatalf("version = %+v", v)
		}
		// An approval: the author's version, with the held write's key,
		// session and dialect.
		e.do(http.MethodPatch, "/v1/org", owner, map[string]any{"team_writes": "review"}).want(t, 200)
		r := e.do(http.MethodPut, "/api/claude_code/team_memory?repo=acme/app", member, `{"entries":{"held.md":"held\n"}}`,
			"Content-Type", "application/json", sessionHdr, "s-2").want(t, 200)
		var put struct {
			ProposalID int64 `json:"proposalId"`
		}
		if err := json.Unmarshal(r.Body, &put); err != nil || put.ProposalID == 0 {
			t.Fatalf("held PUT: %v %s", err, r.Body)
		}
		e.do(http.MethodPost, fmt.Sprintf("/v1/proposals/%d/approve", put.ProposalID), admin, nil).want(t, 200)
		var approved wire.History
		mustJSON(t, e.do(http.MethodGet, team+"/entries/held.md/history", member, nil).want(t, 200).Body, &approved)
		if v := approved.Versions[0]; v.Author != "member" || v.API != "claude_code" || v.KeyID != h.Versions[0].KeyID ||
			v.KeyName != "member" || v.SessionID != "s-2" {
			t.Fatalf("approved version = %+v", v)
		}
	})
}
