package httpapi_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// TestMemoryStoresReviewClaudeCode: on Claude Code's memory-service
// dialect a write held for review (team_writes: review, or poisoning:
// review with findings) and a write refused by poisoning: reject all answer
// 400 invalid_request_error "content rejected by safety check", the message
// the stock client maps to content_screened (a per-file notice, reference
// §8); the proposal is stored once however often the client retries, and
// an admin's approval puts the memory in the store.
func TestMemoryStoresReviewClaudeCode(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newStoreEnv(t, st, teammem.OrgSettings{})
		owner, member, admin := e.keys[teammem.RoleOwner], e.keys[teammem.RoleMember], e.keys[teammem.RoleAdmin]
		p := storePath(t, e, member)
		screened := func(r resp) {
			t.Helper()
			typ, msg := errMessage(t, r.want(t, 400))
			if typ != "invalid_request_error" || msg != teammem.ScreenedMessage {
				t.Fatalf("refusal = %s %q, want invalid_request_error %q", typ, msg, teammem.ScreenedMessage)
			}
		}
		create := func(key, path, content string) resp {
			return e.do("POST", p+"/memories", key, map[string]any{"path": path, "content": content,
				"precondition": map[string]any{"type": "not_exists"}}, cliHeaders...)
		}
		c := create(member, "/base.md", "base\n").want(t, 200).JSON(t)
		id := c["id"].(string)

		e.do("PATCH", "/v1/org", owner, map[string]any{"team_writes": "review"}).want(t, 200)
		screened(create(member, "/held.md", "held\n"))
		screened(create(member, "/held.md", "held\n")) // the client retries after its 6 h
		screened(e.do("POST", p+"/memories/"+id, member, map[string]any{"content": "changed\n",
			"precondition": map[string]any{"type": "content_sha256", "content_sha256": sha("base\n")}}, cliHeaders...))
		screened(e.do("DELETE", p+"/memories/"+id+"?expected_content_sha256="+sha("base\n"), member, nil, cliHeaders...))
		// Held means not in the store; an admin writes directly.
		if got := string(e.do("GET", p+"/memories/"+id, member, nil, cliHeaders...).want(t, 200).Body); !strings.Contains(got, `"content":"base\n"`) {
			t.Fatalf("a held update changed the memory: %s", got)
		}
		create(admin, "/admin.md", "admin\n").want(t, 200)

		var list wire.ProposalList
		mustJSON(t, e.do("GET", "/v1/proposals?status=pending", admin, nil).want(t, 200).Body, &list)
		if len(list.Proposals) != 3 {
			t.Fatalf("%d pending proposals, want 3 (the retried create is the same one)", len(list.Proposals))
		}
		var createID int64
		for _, pr := range list.Proposals {
			if pr.API != "claude_code_memory" || pr.Author != "member" {
				t.Fatalf("proposal = %+v", pr)
			}
			if pr.Changes[0].Key == "held.md" {
				createID = pr.ID
			}
		}
		e.do("POST", "/v1/proposals/"+itoa(int(createID))+"/approve", admin, nil).want(t, 200)
		r := e.do("GET", p+"/memories?limit=100&path_prefix=%2F&depth=1&order_by=path&order=asc", member, nil, cliHeaders...).want(t, 200)
		if !strings.Contains(string(r.Body), `"/held.md"`) {
			t.Fatalf("the approved memory is not listed: %s", r.Body)
		}

		// poisoning: review holds only what the checks flag; reject refuses it.
		e.do("PATCH", "/v1/org", owner, map[string]any{"team_writes": "direct", "poisoning": "review"}).want(t, 200)
		create(member, "/clean.md", "clean\n").want(t, 200)
		screened(create(member, "/poison.md", poisoned))
		e.do("PATCH", "/v1/org", owner, map[string]any{"poisoning": "reject"}).want(t, 200)
		screened(create(member, "/poison2.md", poisoned))
		screened(create(admin, "/poison3.md", poisoned)) // reject binds admins too
		listed := string(e.do("GET", p+"/memories?limit=100", member, nil, cliHeaders...).want(t, 200).Body)
		if strings.Contains(listed, "/poison") || !strings.Contains(listed, `"/held.md"`) {
			t.Fatalf("listing after the refusals: %s", listed)
		}
	})
}

// TestMemoryStoresReviewSDK: through the official Go SDK, a held write and
// a poisoning: reject refusal surface as a 400 BadRequest error with the
// screened message, and nothing is written.
func TestMemoryStoresReviewSDK(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newStoreEnv(t, st, teammem.OrgSettings{})
		owner, member := e.keys[teammem.RoleOwner], e.keys[teammem.RoleMember]
		storeID := strings.TrimPrefix(storePath(t, e, member), "/v1/memory_stores/")
		ctx := t.Context()
		mem := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(member), option.WithMaxRetries(0)).Beta.MemoryStores.Memories
		badRequest := func(err error) {
			t.Helper()
			var apiErr *anthropic.Error
			if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.RawJSON(), teammem.ScreenedMessage) {
				t.Fatalf("want a 400 %q, got %v", teammem.ScreenedMessage, err)
			}
		}
		m, err := mem.New(ctx, storeID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/a.md", Content: anthropic.String("a")})
		if err != nil {
			t.Fatal(err)
		}
		e.do("PATCH", "/v1/org", owner, map[string]any{"team_writes": "review"}).want(t, 200)
		_, err = mem.New(ctx, storeID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/held.md", Content: anthropic.String("held")})
		badRequest(err)
		_, err = mem.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: storeID, Content: anthropic.String("b"),
			Precondition: anthropic.BetaManagedAgentsPreconditionParam{ContentSha256: anthropic.String(m.ContentSha256)}})
		badRequest(err)
		e.do("PATCH", "/v1/org", owner, map[string]any{"team_writes": "direct", "poisoning": "reject"}).want(t, 200)
		_, err = mem.New(ctx, storeID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/p.md", Content: anthropic.String(poisoned)})
		badRequest(err)
		got, err := mem.Get(ctx, m.ID, anthropic.BetaMemoryStoreMemoryGetParams{MemoryStoreID: storeID})
		if err != nil || got.Content != "a" {
			t.Fatalf("after the refusals: %v %+v", err, got)
		}
		n := 0
		iter := mem.ListAutoPaging(ctx, storeID, anthropic.BetaMemoryStoreMemoryListParams{})
		for iter.Next() {
			n++
		}
		if err := iter.Err(); err != nil || n != 1 {
			t.Fatalf("the store holds %d memories (%v), want 1", n, err)
		}
	})
}
