package jobs_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/teammem"
)

// enqueued records the dreams handed to it, and how many creations were
// counted per org (NightlyConfig.Created).
type enqueued struct {
	mu      sync.Mutex
	ds      []teammem.Dream
	created map[string]int
}

func (e *enqueued) count(org teammem.Org) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.created[org.Slug]++
}

// counted returns how many creations of org were counted.
func (e *enqueued) counted(slug string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.created[slug]
}

func (e *enqueued) Enqueue(_ context.Context, d teammem.Dream) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ds = append(e.ds, d)
	return nil
}

// nightlyEnv is a store with an org (its first owner alice, then a second
// owner), team_dream nightly, min writes 3, and a clock the test sets.
type nightlyEnv struct {
	st    teammem.Store
	org   teammem.Org
	owner teammem.User
	enq   *enqueued
	now   time.Time
	win   jobs.Window
}

func newNightlyEnv(t *testing.T, dsn string) *nightlyEnv {
	t.Helper()
	ctx := context.Background()
	e := &nightlyEnv{st: mustStore(t, dsn), enq: &enqueued{created: map[string]int{}}}
	e.win, _ = jobs.ParseWindow("02:00-05:00")
	var err error
	set := teammem.OrgSettings{TeamDream: teammem.TeamDreamNightly, TeamDreamMinWrites: 3,
		TeamDreamRepos: map[string]teammem.TeamDreamPolicy{"acme/manual": teammem.TeamDreamManual, "acme/off": teammem.TeamDreamOff}}
	if e.org, err = e.st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	if e.org, err = e.st.OrgUpdate(ctx, e.org.ID, teammem.OrgUpdateParams{Settings: &set}); err != nil {
		t.Fatal(err)
	}
	if _, err = e.st.UserCreate(ctx, e.org.ID, teammem.UserCreateParams{Handle: "bob", Role: teammem.RoleMember}); err != nil {
		t.Fatal(err)
	}
	if e.owner, err = e.st.UserCreate(ctx, e.org.ID, teammem.UserCreateParams{Handle: "alice", Role: teammem.RoleOwner}); err != nil {
		t.Fatal(err)
	}
	if _, err = e.st.UserCreate(ctx, e.org.ID, teammem.UserCreateParams{Handle: "carol", Role: teammem.RoleOwner}); err != nil {
		t.Fatal(err)
	}
	return e
}

// writes makes n team writes into repo's team space and returns it.
func (e *nightlyEnv) writes(t *testing.T, repo string, n int) teammem.Space {
	t.Helper()
	ctx := context.Background()
	r, err := e.st.RepoEnsure(ctx, e.org.ID, repo)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := e.st.SpaceEnsure(ctx, e.org.ID, teammem.SpaceRef{RepoID: r.ID, Scope: teammem.ScopeTeam})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if sp, err = teammem.SpaceApply(ctx, e.st, e.org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: e.owner.ID},
			Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
				return []teammem.EntryChange{{Key: "a.md", Op: teammem.OpWrite, Content: fmt.Sprintf("write %d at %d\n", i, time.Now().UnixNano())}}, nil
			}}); err != nil {
			t.Fatal(err)
		}
	}
	return sp
}

func (e *nightlyEnv) nightly(models ...string) *jobs.Nightly {
	return jobs.NewNightly(jobs.NightlyConfig{Store: e.st, Enqueuer: e.enq, Models: models, Window: e.win, Created: e.enq.count,
		Now: func() time.Time { return e.now }})
}

// run runs a nightly pass at now and returns the org's dreams, newest first.
func (e *nightlyEnv) run(t *testing.T, n *jobs.Nightly, now time.Time) []teammem.Dream {
	t.Helper()
	e.now = now
	if err := n.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	ds, err := e.st.DreamList(context.Background(), e.org.ID, teammem.DreamFilter{IncludeArchived: true, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// TestNightlyGates: a nightly dream is created for a repo whose team_dream
// is nightly once its minute of the night has come, it had enough team
// writes, no dream of it is pending and the last one is a day old; never
// for a manual or off repo, and without a model never at all.
func TestNightlyGates(t *testing.T) {
	for name, dsn := range drivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			e := newNightlyEnv(t, dsn(t))
			app := e.writes(t, "acme/app", 3)
			e.writes(t, "acme/few", 2)
			e.writes(t, "acme/manual", 5)
			e.writes(t, "acme/off", 5)
			// A day before the writes, so that they count as written since.
			day := time.Now().UTC().AddDate(0, 0, -3).Truncate(24 * time.Hour)
			minute := e.win.Minute(e.org.ID, "acme/app", day)
			if ds := e.run(t, e.nightly(), minute.Add(time.Hour)); len(ds) != 0 {
				t.Fatalf("without a model: %d dreams", len(ds))
			}
			n := e.nightly("model-a", "model-b")
			if ds := e.run(t, n, minute.Add(-time.Minute)); len(ds) != 0 {
				t.Fatalf("before the repo's minute: %d dreams", len(ds))
			}
			ds := e.run(t, n, day.Add(6*time.Hour))
			if len(ds) != 1 {
				t.Fatalf("past the minute: %d dreams, want the one of acme/app (few writes, manual and off have none): %+v", len(ds), ds)
			}
			d := ds[0]
			if d.ID != jobs.NightlyDreamID(e.org.ID, app.ID, day.Format(time.DateOnly)) || d.InputSpaceID != app.ID || d.Model != "model-a" ||
				d.Behavior != teammem.DreamCreateNew || d.Status != teammem.DreamPending || d.CreatorUserID != e.owner.ID {
				t.Fatalf("the nightly dream: %+v", d)
			}
			if len(e.enq.ds) != 1 || e.enq.ds[0].ID != d.ID || e.enq.counted("acme") != 1 {
				t.Fatalf("enqueued %+v, counted %d", e.enq.ds, e.enq.counted("acme"))
			}
			evs, err := e.st.AuditList(ctx, e.org.ID, teammem.AuditFilter{Action: "dream.created"})
			if err != nil || len(evs) != 1 || evs[0].Target != d.ID || evs[0].Details["api"] != "dream" || evs[0].Details["nightly"] != true || evs[0].Repo != "acme/app" {
				t.Fatalf("audit: %+v, %v", evs, err)
			}
			if ds := e.run(t, n, day.Add(7*time.Hour)); len(ds) != 1 || e.enq.counted("acme") != 1 {
				t.Fatalf("a second run that night: %d dreams, %d counted", len(ds), e.enq.counted("acme"))
			}
			if _, err := e.st.DreamCancel(ctx, e.org.ID, d.ID, day.Add(7*time.Hour)); err != nil {
				t.Fatal(err)
			}
			// The next night, past the window but under a day after the
			// last dream.
			if ds := e.run(t, n, day.Add(29*time.Hour)); len(ds) != 1 {
				t.Fatalf("under a day after the last dream: %d dreams", len(ds))
			}
			e.writes(t, "acme/few", 1)
			later := day.Add(30*time.Hour + time.Minute)
			ds = e.run(t, n, later)
			if len(ds) != 3 || ds[0].InputSpaceID == ds[1].InputSpaceID {
				t.Fatalf("the next night, a day after: %d dreams, want acme/app's second and acme/few's first: %+v", len(ds), ds)
			}
			if got := e.enq.counted("acme"); got != 3 {
				t.Fatalf("%d creations counted, want the 3 dreams", got)
			}
		})
	}
}

// TestNightlyOncePerNight: runs racing on two Nightly values (two replicas'
// jobs) create one dream of the store that night.
func TestNightlyOncePerNight(t *testing.T) {
	for name, dsn := range drivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newNightlyEnv(t, dsn(t))
			e.writes(t, "acme/app", 3)
			day := time.Now().UTC().AddDate(0, 0, -1).Truncate(24 * time.Hour)
			e.now = day.Add(5 * time.Hour)
			var wg sync.WaitGroup
			for range 2 {
				n := e.nightly("model-a")
				for range 3 {
					wg.Go(func() {
						if err := n.Run(context.Background()); err != nil {
							t.Error(err)
						}
					})
				}
			}
			wg.Wait()
			ds, err := e.st.DreamList(context.Background(), e.org.ID, teammem.DreamFilter{IncludeArchived: true, Limit: 100})
			if err != nil || len(ds) != 1 {
				t.Fatalf("after six racing runs: %d dreams (%v), want 1", len(ds), err)
			}
			if len(e.enq.ds) != 1 || e.enq.counted("acme") != 1 {
				t.Fatalf("enqueued %d times, counted %d, want once", len(e.enq.ds), e.enq.counted("acme"))
			}
		})
	}
}
