package main_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// TestDreamTeamApplyE2E runs the built server and client: the team store
// of a repository is dreamed over (the dream row moved to completed by the
// store's own methods and its output store filled through the API, as a
// worker would: no model runs), `teammem dream --team drm_… --apply`
// applies it, and a second machine syncs the consolidated memories.
func TestDreamTeamApplyE2E(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "t.db")
	srv := startServerDB(t, db)

	a := newMachine(t, srv, "git@github.com:acme/widgets.git")
	b := newMachine(t, srv, "https://github.com/acme/widgets")
	A, B := a.memDir(), b.memDir()
	a.write(A, "team/MEMORY.md", "- [Deploy](deploy.md)\n- [Tagging](tagging.md)\n- [Ports](ports.md)\n")
	a.write(A, "team/deploy.md", "run make release first\nthen tag the commit with vX.Y\n")
	a.write(A, "team/tagging.md", "then tag the commit with vX.Y\npush the tag to origin\n")
	a.write(A, "team/ports.md", "the api listens on port 8080\n")
	a.must("sync")
	b.must("sync")

	// The repository's team store, and an output store holding the
	// consolidation: the duplicates merged, a fact corrected, the index rewritten.
	var team struct {
		ID string `json:"id"`
	}
	v1Do(t, srv, serverKey, http.MethodPost, "/v1/repos/acme/widgets/team/memory_store", nil, 200, &team)
	var out struct {
		ID string `json:"id"`
	}
	v1Do(t, srv, serverKey, http.MethodPost, "/v1/memory_stores?beta=true", map[string]any{"name": "dream output"}, 200, &out)
	consolidated := map[string]string{
		"/MEMORY.md": "- [Deploy](deploy.md): release, tag, push\n- [Ports](ports.md)\n",
		"/deploy.md": "run make release first\nthen tag the commit with vX.Y\npush the tag to origin\n",
		"/ports.md":  "the api listens on port 9090\n",
	}
	for p, c := range consolidated {
		v1Do(t, srv, serverKey, http.MethodPost, "/v1/memory_stores/"+out.ID+"/memories?beta=true",
			map[string]any{"path": p, "content": c}, 200, nil)
	}
	id := completeDream(t, db, team.ID, out.ID)

	got := a.must("dream", "--team", id, "--apply")
	contains(t, got, "tagging.md")
	b.must("sync")
	for p, c := range consolidated {
		if read(t, B, "team"+p) != c {
			t.Errorf("b's team%s = %q after the apply, want %q", p, read(t, B, "team"+p), c)
		}
	}
	if read(t, B, "team/tagging.md") != "<missing>" {
		t.Error("the merged duplicate tagging.md is still on the other machine")
	}
}

// completeDream records, in the server's own database, a create_new dream
// of input that ran and completed into output, its Base the input's state.
func completeDream(t *testing.T, db, input, output string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	orgs, err := st.OrgList(ctx)
	if err != nil || len(orgs) != 1 {
		t.Fatalf("orgs %v %v", orgs, err)
	}
	org := orgs[0].ID
	store := func(id string) teammem.MemoryStore {
		uid, _ := teammem.StoreUID(id)
		m, err := st.MemoryStoreGet(ctx, org, uid)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	in, out := store(input), store(output)
	heads, err := st.EntriesList(ctx, org, in.Space.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	base := map[string]string{}
	for _, h := range heads {
		base[h.Key] = h.Checksum
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	d, err := st.DreamCreate(ctx, org, teammem.Dream{ID: teammem.NewDreamID(), OrgID: org, InputSpaceID: in.Space.ID,
		InputStoreUID: in.Space.UID, Model: "m1", ModelSpeed: teammem.DreamSpeedStandard, Behavior: teammem.DreamCreateNew, CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DreamStart(ctx, org, d.ID, teammem.DreamStartParams{At: now, Base: base, OutputSpaceID: out.Space.ID,
		OutputStoreUID: out.Space.UID}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DreamFinish(ctx, org, d.ID, teammem.DreamFinishParams{Status: teammem.DreamCompleted, At: now,
		Usage: teammem.DreamUsage{InputTokens: 900, OutputTokens: 200}}); err != nil {
		t.Fatal(err)
	}
	return d.ID
}
