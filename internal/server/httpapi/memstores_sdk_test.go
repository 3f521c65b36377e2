package httpapi_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/teammem/teammem/internal/teammem"
)

// TestMemoryStoresSDK drives the public Memory Stores API with the official
// Go SDK against a real teammem server on both drivers: every call decodes.
func TestMemoryStoresSDK(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		e := newV1Env(t, st, nil)
		ctx := t.Context()
		c := anthropic.NewClient(option.WithBaseURL(e.url), option.WithAPIKey(e.keys[teammem.RoleOwner]), option.WithMaxRetries(0))
		ms := c.Beta.MemoryStores
		store, err := ms.New(ctx, anthropic.BetaMemoryStoreNewParams{Name: "agent notes", Metadata: map[string]string{"team": "a"}})
		if err != nil {
			t.Fatal(err)
		}
		if store.Name != "agent notes" || store.Metadata["team"] != "a" {
			t.Fatalf("store = %+v", store)
		}
		got, err := ms.Get(ctx, store.ID, anthropic.BetaMemoryStoreGetParams{})
		if err != nil || got.ID != store.ID {
			t.Fatalf("get store: %v %+v", err, got)
		}
		m, err := ms.Memories.New(ctx, store.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/a/b.md", Content: anthropic.String("hello")})
		if err != nil {
			t.Fatal(err)
		}
		// view defaults to basic on create (both SDKs declare it): no content.
		if m.Content != "" || m.JSON.Content.Raw() != "null" || m.Path != "/a/b.md" || m.MemoryStoreID != store.ID || m.MemoryVersionID == "" {
			t.Fatalf("memory = %+v", m)
		}
		// A stale precondition is a 409; a rename keeps the id.
		_, err = ms.Memories.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: store.ID, Content: anthropic.String("x"),
			Precondition: anthropic.BetaManagedAgentsPreconditionParam{ContentSha256: anthropic.String(sha("nope"))}})
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusConflict {
			t.Fatalf("stale precondition: %v", err)
		}
		u, err := ms.Memories.Update(ctx, m.ID, anthropic.BetaMemoryStoreMemoryUpdateParams{MemoryStoreID: store.ID, Path: anthropic.String("/c.md"),
			Precondition: anthropic.BetaManagedAgentsPreconditionParam{ContentSha256: anthropic.String(m.ContentSha256)}})
		if err != nil || u.ID != m.ID || u.Path != "/c.md" {
			t.Fatalf("rename: %v %+v", err, u)
		}
		for i := range 250 {
			if _, err := ms.Memories.New(ctx, store.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/many/" + string(rune('a'+i%26)) + "/" + itoa(i) + ".md",
				Content: anthropic.String(itoa(i))}); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		iter := ms.Memories.ListAutoPaging(ctx, store.ID, anthropic.BetaMemoryStoreMemoryListParams{Limit: anthropic.Int(100)})
		for iter.Next() {
			n++
		}
		if err := iter.Err(); err != nil || n != 251 {
			t.Fatalf("listed %d memories (%v), want 251", n, err)
		}
		page, err := ms.Memories.List(ctx, store.ID, anthropic.BetaMemoryStoreMemoryListParams{PathPrefix: anthropic.String("/many/"), Depth: anthropic.Int(1), Limit: anthropic.Int(100)})
		if err != nil || len(page.Data) != 26 || page.Data[0].Type != "memory_prefix" {
			t.Fatalf("depth=1: %v, %d items", err, len(page.Data))
		}
		vs, err := ms.MemoryVersions.List(ctx, store.ID, anthropic.BetaMemoryStoreMemoryVersionListParams{MemoryID: anthropic.String(m.ID)})
		if err != nil || len(vs.Data) != 3 {
			t.Fatalf("versions: %v %d", err, len(vs.Data))
		}
		old := vs.Data[len(vs.Data)-1]
		if old.Operation != "created" || old.CreatedBy.Type != "api_actor" {
			t.Fatalf("first version = %+v", old)
		}
		red, err := ms.MemoryVersions.Redact(ctx, old.ID, anthropic.BetaMemoryStoreMemoryVersionRedactParams{MemoryStoreID: store.ID})
		if err != nil || red.Content != "" || red.Path != "" || red.RedactedAt.IsZero() {
			t.Fatalf("redact: %v %+v", err, red)
		}
		if _, err := ms.Memories.Delete(ctx, u.ID, anthropic.BetaMemoryStoreMemoryDeleteParams{MemoryStoreID: store.ID,
			ExpectedContentSha256: anthropic.String(sha("hello"))}); err != nil {
			t.Fatal(err)
		}
		if _, err := ms.Archive(ctx, store.ID, anthropic.BetaMemoryStoreArchiveParams{}); err != nil {
			t.Fatal(err)
		}
		_, err = ms.Memories.New(ctx, store.ID, anthropic.BetaMemoryStoreMemoryNewParams{Path: "/z.md", Content: anthropic.String("z")})
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
			t.Fatalf("write to an archived store: %v", err)
		}
		list, err := ms.List(ctx, anthropic.BetaMemoryStoreListParams{IncludeArchived: anthropic.Bool(true)})
		if err != nil || len(list.Data) != 1 {
			t.Fatalf("stores: %v", err)
		}
		if _, err := ms.Delete(ctx, store.ID, anthropic.BetaMemoryStoreDeleteParams{}); err != nil {
			t.Fatal(err)
		}
	})
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}
