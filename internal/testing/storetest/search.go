package storetest

import (
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// search runs a query as the member, at most 20 rows.
func (b *bundle) search(t *testing.T, q string, f teammem.SearchFilter) []teammem.SearchRow {
	t.Helper()
	terms, err := teammem.ParseSearchQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	f.Terms = terms
	if f.UserID == 0 {
		f.UserID = b.member.ID
	}
	if f.Limit == 0 {
		f.Limit = 20
	}
	return must[[]teammem.SearchRow](t)(b.store.EntriesSearch(b.ctx, b.org.ID, f))
}

// hits names rows as repo:scope:key.
func hits(rows []teammem.SearchRow) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Repo + ":" + string(r.Scope) + ":" + r.Key
	}
	return strings.Join(out, " ")
}

func testSearch(t *testing.T, b *bundle) {
	w := b.space(t, "acme/widgets")
	g := b.space(t, "acme/gadgets")
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 60)
	w = b.apply(t, w, write("deploy.md", "# Deploy\n\nWe deploy to staging first, then deploy to production."),
		write("notes/go.md", "Prefer table-driven tests.\n"),
		write("long.md", filler+"one deploy mention "+filler),
		write("host.md", "The box is build-01.staging.example.com; its user_name is ci_bot."))
	b.apply(t, g, write("gadgets.md", "Gadgets deploy on Fridays."))
	mine := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: w.RepoID, Scope: teammem.ScopePersonal, UserID: b.member.ID}))
	b.apply(t, mine, write("me.md", "I deploy with care."))
	theirs := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: w.RepoID, Scope: teammem.ScopePersonal, UserID: b.owner.ID}))
	b.apply(t, theirs, write("owner.md", "The owner's own deploy notes."))
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "rival", Name: "Rival"}))
	orepo := must[teammem.Repo](t)(b.store.RepoEnsure(b.ctx, other.ID, "acme/widgets"))
	osp := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, other.ID, teammem.SpaceRef{RepoID: orepo.ID, Scope: teammem.ScopeTeam}))
	must[teammem.Space](t)(teammem.SpaceApply(b.ctx, b.store, other.ID, osp.ID, teammem.ApplyParams{Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
		return []teammem.EntryChange{write("rival.md", "rival deploy secrets")}, nil
	}}))

	// Every team space and the caller's own personal spaces; never another
	// user's or another org's. The denser match ranks first.
	rows := b.search(t, "deploy", teammem.SearchFilter{})
	if got := hits(rows); len(rows) != 4 || !strings.HasPrefix(got, "acme/widgets:team:deploy.md ") ||
		strings.Contains(got, "owner.md") || strings.Contains(got, "rival") || !strings.Contains(got, "acme/widgets:personal:me.md") ||
		!strings.Contains(got, "acme/gadgets:team:gadgets.md") || !strings.Contains(got, "long.md") {
		t.Fatalf("deploy found %s", got)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].Score > rows[i-1].Score {
			t.Fatalf("rows not best first: %+v", rows)
		}
	}
	if r := rows[0]; r.Content == "" || r.UpdatedBy != "alice" || r.UpdatedAt.IsZero() || r.Score <= 0 {
		t.Fatalf("row = %+v", r)
	}
	// Narrowed by repo and scope.
	if got := hits(b.search(t, "deploy", teammem.SearchFilter{RepoID: w.RepoID, Scope: teammem.ScopePersonal})); got != "acme/widgets:personal:me.md" {
		t.Fatalf("personal widgets = %s", got)
	}
	if got := hits(b.search(t, "deploy", teammem.SearchFilter{RepoID: g.RepoID})); got != "acme/gadgets:team:gadgets.md" {
		t.Fatalf("gadgets = %s", got)
	}
	// Every word required; the key's words count; words cut at punctuation;
	// case folded; prefixes.
	cases := map[string]string{
		"deploy staging":     "acme/widgets:team:deploy.md",
		"go":                 "acme/widgets:team:notes/go.md",
		"TABLE driven":       "acme/widgets:team:notes/go.md",
		"staging example":    "acme/widgets:team:host.md",
		"ci bot name":        "acme/widgets:team:host.md",
		"build 01":           "acme/widgets:team:host.md",
		"fri*":               "acme/gadgets:team:gadgets.md",
		"deploy nothinglike": "",
	}
	for q, want := range cases {
		if got := hits(b.search(t, q, teammem.SearchFilter{})); got != want {
			t.Errorf("%q found %q, want %q", q, got, want)
		}
	}
	// Pages.
	first := b.search(t, "deploy", teammem.SearchFilter{Limit: 2})
	second := b.search(t, "deploy", teammem.SearchFilter{Limit: 2, Offset: 2})
	if hits(first)+" "+hits(second) != hits(rows[:4]) {
		t.Fatalf("pages %s | %s, want %s", hits(first), hits(second), hits(rows[:4]))
	}
	// Kept current by every write: an overwrite, a delete, a rename.
	w = b.apply(t, w, write("deploy.md", "Releases go out on Mondays."), del("long.md"), del("host.md"), write("box.md", "build-01.staging.example.com"))
	if got := hits(b.search(t, "production", teammem.SearchFilter{})) + hits(b.search(t, "lorem", teammem.SearchFilter{})); got != "" {
		t.Fatalf("deploy after the overwrite and delete found %s", got)
	}
	if got := hits(b.search(t, "mondays", teammem.SearchFilter{})); got != "acme/widgets:team:deploy.md" {
		t.Fatalf("mondays = %s", got)
	}
	if got := hits(b.search(t, "staging", teammem.SearchFilter{})); got != "acme/widgets:team:box.md" {
		t.Fatalf("staging after the rename = %s", got)
	}
	// A tombstone written back to life is found again.
	b.apply(t, w, write("host.md", "back again"))
	if got := hits(b.search(t, "again", teammem.SearchFilter{})); got != "acme/widgets:team:host.md" {
		t.Fatalf("again = %s", got)
	}
}
