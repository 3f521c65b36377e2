package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// search runs a query as the member and ranks what it found.
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
	rows := must[[]teammem.SearchRow](t)(b.store.EntriesSearch(b.ctx, b.org.ID, f))
	teammem.RankSearch(rows, terms)
	return rows
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
	if r := rows[0]; r.Text == "" || r.UpdatedBy != "alice" || r.UpdatedAt.IsZero() || r.Score <= 0 {
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
	// The text is the content's beginning, at most SearchTextMax characters.
	long := strings.Repeat("é", teammem.SearchTextMax+10)
	b.apply(t, g, write("long.md", "deploy "+long))
	for _, r := range b.search(t, "deploy", teammem.SearchFilter{RepoID: g.RepoID}) {
		if r.Key == "long.md" && r.Text != ("deploy " + long)[:len("deploy ")+2*(teammem.SearchTextMax-len("deploy "))] {
			t.Fatalf("long.md's text is %d bytes", len(r.Text))
		}
	}
	b.apply(t, g, del("long.md"))
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
	// A memory store made through the API belongs to no repo: never found.
	m := must[teammem.MemoryStore](t)(b.store.MemoryStoreCreate(b.ctx, b.org.ID, teammem.MemoryStoreCreateParams{Name: "api"}))
	b.apply(t, m.Space, write("store.md", "again from a store"))
	if got := hits(b.search(t, "again", teammem.SearchFilter{})); got != "acme/widgets:team:host.md" {
		t.Fatalf("again with an API store = %s", got)
	}
}

// testSearchCandidates checks the bound on a search's work: of the
// entries that match, the SearchCandidates most recently written are
// ranked, and a narrower query still finds an older one.
func testSearchCandidates(t *testing.T, b *bundle) {
	sp := b.space(t, "acme/many")
	sp = b.apply(t, sp, write("old.md", "common and rare"))
	var many []teammem.EntryChange
	for i := range teammem.SearchCandidates {
		many = append(many, write(fmt.Sprintf("n/%04d.md", i), "common"))
	}
	b.apply(t, sp, many...)
	seen := map[string]bool{}
	for _, r := range b.search(t, "common", teammem.SearchFilter{}) {
		seen[r.Key] = true
	}
	if len(seen) != teammem.SearchCandidates || seen["old.md"] {
		t.Fatalf("common found %d entries (old.md %v), want the %d most recently written", len(seen), seen["old.md"], teammem.SearchCandidates)
	}
	if got := hits(b.search(t, "common rare", teammem.SearchFilter{})); got != "acme/many:team:old.md" {
		t.Fatalf("common rare = %s", got)
	}
}
