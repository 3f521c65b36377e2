package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// TestLargeBodiesDecodeInCheckSlots: a large request body is decoded in
// one of the writer's check slots, so one org's concurrent large pushes
// cannot take every core; a small push never waits for a slot.
func TestLargeBodiesDecodeInCheckSlots(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key, prefix := teammem.NewKeyString()
	if _, err := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme",
		Owner: &teammem.OrgOwner{Handle: "admin", KeyName: "owner", KeyPrefix: prefix, KeyHash: teammem.HashKey(key)}}); err != nil {
		t.Fatal(err)
	}
	s := New(st, nil, Config{Defaults: teammem.DefaultServerDefaults, MaxBodyBytes: 4 << 20}, nil, nil)
	s.writer.CheckSlots = 1
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	put := func(repo string, entries map[string]string) int {
		body, _ := json.Marshal(map[string]any{"entries": entries})
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/api/claude_code/team_memory?repo="+repo, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	release, err := s.writer.CheckSlot(ctx) // the only slot, taken
	if err != nil {
		t.Fatal(err)
	}
	large := make(chan int, 1)
	go func() {
		// Entries each too small for a check slot of their own: only
		// the body's decode waits.
		entries := map[string]string{}
		for i := range sharedDecodeBytes/(teammem.SharedCheckBytes-1) + 1 {
			entries[fmt.Sprintf("e%02d.md", i)] = strings.Repeat("y", teammem.SharedCheckBytes-1)
		}
		large <- put("acme/big", entries)
	}()
	if got := put("acme/small", map[string]string{"s.md": "small"}); got != http.StatusOK {
		t.Fatalf("small push while the slot is taken: %d, want 200", got)
	}
	// It cannot finish while the slot is taken; were it not waiting for
	// one, it would be done well within this.
	select {
	case got := <-large:
		t.Fatalf("the large push finished (%d) while its decode had no slot", got)
	case <-time.After(time.Second):
	}
	release()
	if got := <-large; got != http.StatusOK {
		t.Fatalf("large push once the slot is free: %d, want 200", got)
	}
}
