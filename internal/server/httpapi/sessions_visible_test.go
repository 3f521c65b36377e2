package httpapi

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// TestSessionVisible: what the Dreams API asks of every session a dream
// names. A session that wrote a team space is visible to the org, one that
// wrote only a personal space to its user alone, and a malformed or
// unknown id to nobody, without an error.
func TestSessionVisible(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	org, _ := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme"})
	other, _ := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"})
	alice, _ := st.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "alice", Role: teammem.RoleMember})
	bob, _ := st.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "bob", Role: teammem.RoleMember})
	eve, _ := st.UserCreate(ctx, other.ID, teammem.UserCreateParams{Handle: "eve", Role: teammem.RoleOwner})
	repo, _ := st.RepoEnsure(ctx, org.ID, "acme/w")
	write := func(ref teammem.SpaceRef, user int64, session string) {
		sp, err := st.SpaceEnsure(ctx, org.ID, ref)
		if err != nil {
			t.Fatal(err)
		}
		_, err = teammem.SpaceApply(ctx, st, org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: user, SessionID: session},
			Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
				return []teammem.EntryChange{{Key: session + ".md", Op: teammem.OpWrite, Content: "x"}}, nil
			}})
		if err != nil {
			t.Fatal(err)
		}
	}
	const team, personal = "aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-000000000002"
	write(teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam}, alice.ID, team)
	write(teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: bob.ID}, bob.ID, personal)
	s := New(st, nil, Config{Defaults: teammem.DefaultServerDefaults}, nil, nil)
	as := func(org teammem.Org, u teammem.User) teammem.Principal { return teammem.Principal{Org: org, User: u} }
	teamID, _ := teammem.SessionPublicID(team)
	personalID, _ := teammem.SessionPublicID(personal)
	for _, c := range []struct {
		who  string
		p    teammem.Principal
		id   string
		want bool
	}{
		{"alice, team", as(org, alice), teamID, true},
		{"bob, team", as(org, bob), teamID, true},
		{"eve, team", as(other, eve), teamID, false},
		{"alice, bob's personal", as(org, alice), personalID, false},
		{"bob, his personal", as(org, bob), personalID, true},
		{"alice, malformed", as(org, alice), "sesn_xyz", false},
		{"alice, unknown", as(org, alice), "sesn_" + "00000000000040008000000000000009", false},
	} {
		got, err := s.sessionVisible(ctx, c.p, c.id)
		if err != nil || got != c.want {
			t.Errorf("%s: sessionVisible = %v, %v; want %v", c.who, got, err, c.want)
		}
	}
}
