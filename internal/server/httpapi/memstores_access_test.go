package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// sdkClient is the official SDK as an agent builder points it at teammem.
func sdkClient(e *v1Env, key string, opts ...option.RequestOption) *anthropic.Client {
	c := anthropic.NewClient(append([]option.RequestOption{option.WithBaseURL(e.url), option.WithAPIKey(key), option.WithMaxRetries(0)}, opts...)...)
	return &c
}

// wantStatus fails unless err is the SDK's error with status.
func wantStatus(t *testing.T, what string, err error, status int) {
	t.Helper()
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != status {
		t.Fatalf("%s: %v, want HTTP %d", what, err, status)
	}
}

// TestMemoryStoreVisibility checks through the SDK, on both drivers, who
// sees which store: a key lists its org's team stores, the API stores and
// its own personal stores only, and anything else (another user's personal
// store, another org's stores, their memories and versions, named directly
// or through one's own store) does not exist for it.
func TestMemoryStoreVisibility(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		ctx := t.Context()
		alice := e.keys[teammem.RoleMember]
		_, bob := MustUserKey(t, st, e.org, "bob", teammem.RoleMember)
		viewer := e.keys[teammem.RoleViewer]
		other := MustOrg(t, st, "other", teammem.OrgSettings{})
		_, eve := MustUserKey(t, st, other, "eve", teammem.RoleOwner)

		repoStore := func(key, scope string) string {
			return e.do("POST", "/v1/repos/acme/widgets/"+scope+"/memory_store", key, nil).want(t, 200).JSON(t)["id"].(string)
		}
		team, alicePersonal, bobPersonal := repoStore(alice, "team"), repoStore(alice, "personal"), repoStore(bob, "personal")
		api, err := sdkClient(e, e.keys[teammem.RoleOwner]).Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "agents"})
		if err != nil {
			t.Fatal(err)
		}
		eveStore, err := sdkClient(e, eve).Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "eve's"})
		if err != nil {
			t.Fatal(err)
		}
		// One memory (and so one version) in each store, written by its owner.
		type seeded struct{ mem, ver string }
		seed := func(key, store string) seeded {
			ms := sdkClient(e, key).Beta.MemoryStores
			m, err := ms.Memories.New(ctx, store, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/private.md", Content: anthropic.String("mine")})
			if err != nil {
				t.Fatalf("seed %s: %v", store, err)
			}
			return seeded{m.ID, m.MemoryVersionID}
		}
		bobMem, eveMem, aliceMem := seed(bob, bobPersonal), seed(eve, eveStore.ID), seed(alice, alicePersonal)

		listed := func(key string) []string {
			var ids []string
			iter := sdkClient(e, key).Beta.MemoryStores.ListAutoPaging(ctx, anthropic.BetaMemoryStoreListParams{Limit: anthropic.Int(1)})
			for iter.Next() {
				ids = append(ids, iter.Current().ID)
			}
			if err := iter.Err(); err != nil {
				t.Fatal(err)
			}
			sort.Strings(ids)
			return ids
		}
		want := func(ids ...string) []string { sort.Strings(ids); return ids }
		for _, c := range []struct {
			who  string
			key  string
			want []string
		}{
			{"alice", alice, want(team, alicePersonal, api.ID)},
			{"bob", bob, want(team, bobPersonal, api.ID)},
			{"a viewer", viewer, want(team, api.ID)},
			{"another org", eve, want(eveStore.ID)},
		} {
			if got := listed(c.key); !equalStrings(got, c.want) {
				t.Errorf("%s lists %v, want %v", c.who, got, c.want)
			}
		}

		// Every route on a store the caller may not see: 404, as if absent.
		hidden := []struct {
			who, key, store string
			m               seeded
		}{
			{"alice on bob's personal store", alice, bobPersonal, bobMem},
			{"a viewer on bob's personal store", viewer, bobPersonal, bobMem},
			{"another org on a team store", eve, team, aliceMem},
			{"another org on alice's personal store", eve, alicePersonal, aliceMem},
			{"alice on another org's store", alice, eveStore.ID, eveMem},
		}
		for _, h := range hidden {
			ms := sdkClient(e, h.key).Beta.MemoryStores
			_, err := ms.Get(ctx, h.store, anthropic.BetaMemoryStoreGetParams{})
			wantStatus(t, h.who+": get", err, http.StatusNotFound)
			_, err = ms.Memories.List(ctx, h.store, anthropic.BetaMemoryStoreMemoryListParams{})
			wantStatus(t, h.who+": list memories", err, http.StatusNotFound)
			_, err = ms.Memories.Get(ctx, h.m.mem, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: h.store})
			wantStatus(t, h.who+": get memory", err, http.StatusNotFound)
			_, err = ms.Memories.New(ctx, h.store, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/x.md", Content: anthropic.String("x")})
			wantStatus(t, h.who+": create memory", err, http.StatusNotFound)
			_, err = ms.Memories.Update(ctx, h.m.mem, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: h.store, Content: anthropic.String("x")})
			wantStatus(t, h.who+": update memory", err, http.StatusNotFound)
			_, err = ms.Memories.Delete(ctx, h.m.mem, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: h.store})
			wantStatus(t, h.who+": delete memory", err, http.StatusNotFound)
			_, err = ms.MemoryVersions.List(ctx, h.store, anthropic.BetaMemoryStoreMemoryVersionListParams{})
			wantStatus(t, h.who+": list versions", err, http.StatusNotFound)
			_, err = ms.MemoryVersions.Get(ctx, h.m.ver, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: h.store})
			wantStatus(t, h.who+": get version", err, http.StatusNotFound)
			_, err = ms.MemoryVersions.Redact(ctx, h.m.ver, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: h.store})
			wantStatus(t, h.who+": redact version", err, http.StatusNotFound)
			_, err = ms.Update(ctx, h.store, anthropic.BetaMemoryStoreUpdateParams{Name: anthropic.String("x")})
			wantStatus(t, h.who+": update store", err, http.StatusNotFound)
			_, err = ms.Archive(ctx, h.store, anthropic.BetaMemoryStoreArchiveParams{})
			wantStatus(t, h.who+": archive", err, http.StatusNotFound)
			_, err = ms.Delete(ctx, h.store, anthropic.BetaMemoryStoreDeleteParams{})
			wantStatus(t, h.who+": delete store", err, http.StatusNotFound)
		}
		// Another store's memory or version named through one's own store
		// (the owner's team store: a member may not redact there at all).
		ms := sdkClient(e, alice).Beta.MemoryStores
		admin := sdkClient(e, e.keys[teammem.RoleOwner]).Beta.MemoryStores
		for _, m := range []seeded{bobMem, eveMem} {
			_, err := ms.Memories.Get(ctx, m.mem, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: alicePersonal})
			wantStatus(t, "a foreign memory through alice's store", err, http.StatusNotFound)
			_, err = ms.Memories.Delete(ctx, m.mem, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: team})
			wantStatus(t, "a foreign memory deleted through the team store", err, http.StatusNotFound)
			_, err = ms.MemoryVersions.Get(ctx, m.ver, anthropic.BetaMemoryStoreMemoryVersionGetParams{MemoryStoreID: alicePersonal})
			wantStatus(t, "a foreign version through alice's store", err, http.StatusNotFound)
			_, err = ms.MemoryVersions.Redact(ctx, m.ver, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: alicePersonal})
			wantStatus(t, "a foreign version redacted through alice's store", err, http.StatusNotFound)
			_, err = admin.MemoryVersions.Redact(ctx, m.ver, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: team})
			wantStatus(t, "a foreign version redacted through the team store", err, http.StatusNotFound)
		}
		// What was hidden is untouched.
		for _, c := range []struct{ key, store, mem string }{{bob, bobPersonal, bobMem.mem}, {eve, eveStore.ID, eveMem.mem}} {
			m, err := sdkClient(e, c.key).Beta.MemoryStores.Memories.Get(ctx, c.mem, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: c.store})
			if err != nil || m.Content != "mine" {
				t.Fatalf("the owner's memory after the attempts: %v %+v", err, m)
			}
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMemoryVersionFilters checks every filter of GET …/memory_versions
// through the SDK on both drivers, alone and while paging: memory_id,
// operation, session_id, api_key_id and created_at[gte|lte].
func TestMemoryVersionFilters(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		ctx := t.Context()
		owner := e.users[teammem.RoleOwner]
		k1, k2 := e.keys[teammem.RoleOwner], MustExtraKey(t, st, e.org, owner, false)
		store, err := sdkClient(e, k1).Beta.MemoryStores.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "filters"})
		if err != nil {
			t.Fatal(err)
		}
		session := option.WithHeader("X-Claude-Code-Session-Id", "session-42")
		by1, by2 := sdkClient(e, k1).Beta.MemoryStores.Memories, sdkClient(e, k2).Beta.MemoryStores.Memories
		bySession := sdkClient(e, k2, session).Beta.MemoryStores.Memories
		// a: created (k1), modified (k2), deleted (session); b: created (session), modified (k1).
		a, err := by1.New(ctx, store.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/a.md", Content: anthropic.String("a1")})
		if err != nil {
			t.Fatal(err)
		}
		b, err := bySession.New(ctx, store.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/b.md", Content: anthropic.String("b1")})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := by2.Update(ctx, a.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: store.ID, Content: anthropic.String("a2")}); err != nil {
			t.Fatal(err)
		}
		if _, err := by1.Update(ctx, b.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: store.ID, Content: anthropic.String("b2")}); err != nil {
			t.Fatal(err)
		}
		if _, err := bySession.Delete(ctx, a.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: store.ID}); err != nil {
			t.Fatal(err)
		}

		vs := sdkClient(e, k1).Beta.MemoryStores.MemoryVersions
		list := func(p anthropic.BetaMemoryStoreMemoryVersionListParams) []anthropic.BetaManagedAgentsMemoryVersion {
			t.Helper()
			p.Limit = anthropic.Int(1) // filters must hold across pages
			var out []anthropic.BetaManagedAgentsMemoryVersion
			iter := vs.ListAutoPaging(ctx, store.ID, p)
			for iter.Next() {
				out = append(out, iter.Current())
			}
			if err := iter.Err(); err != nil {
				t.Fatal(err)
			}
			return out
		}
		all := list(anthropic.BetaMemoryStoreMemoryVersionListParams{})
		if len(all) != 5 {
			t.Fatalf("%d versions, want 5", len(all))
		}
		for i := 1; i < len(all); i++ {
			if all[i].CreatedAt.After(all[i-1].CreatedAt) {
				t.Fatalf("versions are not newest first: %v after %v", all[i].CreatedAt, all[i-1].CreatedAt)
			}
		}
		var key1 string
		for _, v := range all {
			if v.MemoryID == a.ID && v.Operation == "created" {
				key1 = v.CreatedBy.APIKeyID
			}
		}
		if key1 == "" {
			t.Fatal("the first version names no api key")
		}
		// describe renders versions as memory:operation, newest first.
		describe := func(vs []anthropic.BetaManagedAgentsMemoryVersion) []string {
			var out []string
			for _, v := range vs {
				name := "a"
				if v.MemoryID == b.ID {
					name = "b"
				}
				out = append(out, name+":"+string(v.Operation))
			}
			return out
		}
		mid := all[2].CreatedAt // the middle version (newest first: a's modification)
		var gte, lte []string
		for _, v := range all {
			if !v.CreatedAt.Before(mid) {
				gte = append(gte, describe([]anthropic.BetaManagedAgentsMemoryVersion{v})...)
			}
			if !v.CreatedAt.After(mid) {
				lte = append(lte, describe([]anthropic.BetaManagedAgentsMemoryVersion{v})...)
			}
		}
		cases := []struct {
			name string
			p    anthropic.BetaMemoryStoreMemoryVersionListParams
			want []string
		}{
			{"memory_id", anthropic.BetaMemoryStoreMemoryVersionListParams{MemoryID: anthropic.String(a.ID)}, []string{"a:deleted", "a:modified", "a:created"}},
			{"operation created", anthropic.BetaMemoryStoreMemoryVersionListParams{Operation: "created"}, []string{"b:created", "a:created"}},
			{"operation modified", anthropic.BetaMemoryStoreMemoryVersionListParams{Operation: "modified"}, []string{"b:modified", "a:modified"}},
			{"operation deleted", anthropic.BetaMemoryStoreMemoryVersionListParams{Operation: "deleted"}, []string{"a:deleted"}},
			{"session_id", anthropic.BetaMemoryStoreMemoryVersionListParams{SessionID: anthropic.String("session-42")}, []string{"a:deleted", "b:created"}},
			{"unknown session_id", anthropic.BetaMemoryStoreMemoryVersionListParams{SessionID: anthropic.String("nobody")}, nil},
			{"api_key_id", anthropic.BetaMemoryStoreMemoryVersionListParams{APIKeyID: anthropic.String(key1)}, []string{"b:modified", "a:created"}},
			{"created_at[gte]", anthropic.BetaMemoryStoreMemoryVersionListParams{CreatedAtGte: anthropic.Time(mid)}, gte},
			{"created_at[lte]", anthropic.BetaMemoryStoreMemoryVersionListParams{CreatedAtLte: anthropic.Time(mid)}, lte},
			{"created_at both", anthropic.BetaMemoryStoreMemoryVersionListParams{CreatedAtGte: anthropic.Time(mid), CreatedAtLte: anthropic.Time(mid)}, []string{"a:modified"}},
			{"created_at in the future", anthropic.BetaMemoryStoreMemoryVersionListParams{CreatedAtGte: anthropic.Time(time.Now().Add(time.Hour))}, nil},
			{"memory_id and operation", anthropic.BetaMemoryStoreMemoryVersionListParams{MemoryID: anthropic.String(b.ID), Operation: "modified"}, []string{"b:modified"}},
			{"service_account_id", anthropic.BetaMemoryStoreMemoryVersionListParams{ServiceAccountID: anthropic.String("svac_x")}, nil},
		}
		for _, c := range cases {
			if got := describe(list(c.p)); !equalStrings(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
		// Session versions say so.
		for _, v := range list(anthropic.BetaMemoryStoreMemoryVersionListParams{SessionID: anthropic.String("session-42")}) {
			if v.CreatedBy.Type != "session_actor" || v.CreatedBy.SessionID != "session-42" {
				t.Fatalf("a session's version was created by %+v", v.CreatedBy)
			}
		}
		// Bad filter values are clear 400s.
		base := "/v1/memory_stores/" + store.ID + "/memory_versions?beta=true&"
		for _, q := range []string{"operation=renamed", "created_at%5Bgte%5D=yesterday", "created_at%5Blte%5D=2026-13-01T00:00:00Z", "limit=0", "limit=101", "page=abc", "view=huge"} {
			r := e.do("GET", base+q, k1, nil).want(t, 400)
			if typ, msg := errMessage(t, r); typ != "invalid_request_error" || msg == "" {
				t.Errorf("%s: %s %q", q, typ, msg)
			}
		}
	})
}

// TestMemoryStoreBackoff checks that the store routes' 429s and 503s carry
// Retry-After in Anthropic's envelope, which Claude Code's client reads as
// "sit this cycle out" (reference §8): the read and the write buckets, and
// a database that cannot serve the request for now.
func TestMemoryStoreBackoff(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		clock := newTestClock()
		e := newV1Env(t, st, func(c *httpapi.Config) {
			c.WriteRate, c.WriteBurst = 1, 2
			c.Read = httpapi.RateLimit{Rate: 1, Burst: 4}
			c.Clock = clock.Now
		})
		key := e.keys[teammem.RoleMember]
		p := storePath(t, e, key) // no write token; its snapshot read takes one read token
		wantBackoff := func(r resp, typ string) {
			t.Helper()
			if r.Header.Get("Retry-After") == "" {
				t.Fatalf("HTTP %d without Retry-After: %s", r.Status, r.Body)
			}
			if got, msg := errMessage(t, r); got != typ || msg == "" {
				t.Fatalf("HTTP %d: %s %q, want %s", r.Status, got, msg, typ)
			}
		}
		// Writes: the key's burst of 2, then 429.
		e.do("POST", p+"/memories", key, map[string]any{"path": "/a.md", "content": "a"}, cliHeaders...).want(t, 200)
		e.do("DELETE", p+"/memories/"+e.do("GET", p+"/memories", key, nil).want(t, 200).JSON(t)["data"].([]any)[0].(map[string]any)["id"].(string),
			key, nil, cliHeaders...).want(t, 200)
		wantBackoff(e.do("POST", p+"/memories", key, map[string]any{"path": "/b.md", "content": "b"}, cliHeaders...).want(t, 429), "rate_limit_error")
		// Memory writes took no read token: of the burst of 4, the snapshot
		// and the listing took two.
		for range 2 {
			e.do("GET", p+"/memories/export?view=basic", key, nil, cliHeaders...).want(t, 200)
		}
		wantBackoff(e.do("GET", p+"/memories/export?view=basic", key, nil, cliHeaders...).want(t, 429), "rate_limit_error")
		wantBackoff(e.do("GET", "/v1/memory_stores?beta=true", key, nil).want(t, 429), "rate_limit_error")
		clock.Add(2 * time.Second)
		e.do("POST", p+"/memories", key, map[string]any{"path": "/b.md", "content": "b"}, cliHeaders...).want(t, 200)
		e.do("GET", p+"/memories?limit=100", key, nil, cliHeaders...).want(t, 200)
	})
}

// TestMemoryStoreUnavailable checks a 503's Retry-After on Postgres: a
// database whose lock_timeout is short, and a space whose row lock another
// transaction holds, so the write cannot be served for now.
func TestMemoryStoreUnavailable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dsn := testpg.NewDatabase(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET lock_timeout = 50', current_database()); END $$`); err != nil {
		t.Fatal(err)
	}
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := newV1Env(t, db, nil)
	key := e.keys[teammem.RoleMember]
	p := storePath(t, e, key)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if _, err := tx.Exec(ctx, `SELECT 1 FROM spaces FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	r := e.do("POST", p+"/memories", key, map[string]any{"path": "/a.md", "content": "a"}, cliHeaders...).want(t, 503)
	if r.Header.Get("Retry-After") == "" {
		t.Fatalf("503 without Retry-After: %s", r.Body)
	}
	if typ, msg := errMessage(t, r); typ != "overloaded_error" || msg == "" {
		t.Fatalf("503 body: %s %q", typ, msg)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	e.do("POST", p+"/memories", key, map[string]any{"path": "/a.md", "content": "a"}, cliHeaders...).want(t, 200)
}
