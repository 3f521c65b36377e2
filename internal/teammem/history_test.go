package teammem_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

func TestPlanRedact(t *testing.T) {
	t.Parallel()
	at := time.Now()
	live := teammem.Entry{Key: "a.md", Checksum: teammem.EntryChecksum("now"), Version: 3}
	old := teammem.EntryVersion{Key: "a.md", Version: 1, Op: teammem.OpWrite, Checksum: teammem.EntryChecksum("then")}
	for _, tc := range []struct {
		name   string
		v      teammem.EntryVersion
		head   teammem.Entry
		exists bool
		ok     bool
		code   string
	}{
		{"an old version", old, live, true, true, ""},
		{"the live content", teammem.EntryVersion{Key: "a.md", Version: 3, Op: teammem.OpWrite, Checksum: live.Checksum}, live, true, false, teammem.EConflict},
		{"live again by a restore", teammem.EntryVersion{Key: "a.md", Version: 2, Op: teammem.OpWrite, Checksum: live.Checksum}, live, true, false, teammem.EConflict},
		{"the last content of a deleted entry", teammem.EntryVersion{Key: "a.md", Version: 3, Op: teammem.OpWrite, Checksum: live.Checksum},
			teammem.Entry{Key: "a.md", Checksum: live.Checksum, Deleted: true}, true, true, ""},
		{"a purged tombstone's", old, teammem.Entry{}, false, true, ""},
		{"a deletion", teammem.EntryVersion{Key: "a.md", Version: 4, Op: teammem.OpDelete, Checksum: live.Checksum}, live, true, false, teammem.EInvalid},
		{"already redacted", teammem.EntryVersion{Key: "a.md", Version: 1, Op: teammem.OpWrite, RedactedAt: &at}, live, true, false, ""},
	} {
		ok, err := teammem.PlanRedact(tc.v, tc.head, tc.exists)
		if ok != tc.ok || teammem.ErrorCode(err) != tc.code {
			t.Errorf("%s: PlanRedact = %v, %v; want %v, code %q", tc.name, ok, err, tc.ok, tc.code)
		}
	}
}

func TestRestoreUpsert(t *testing.T) {
	t.Parallel()
	at := time.Now()
	for _, tc := range []struct {
		v    teammem.EntryVersion
		code string
	}{
		{teammem.EntryVersion{Key: "a.md", Version: 1, Op: teammem.OpWrite, Content: "x"}, ""},
		{teammem.EntryVersion{Key: "a.md", Version: 2, Op: teammem.OpDelete}, teammem.EInvalid},
		{teammem.EntryVersion{Key: "a.md", Version: 3, Op: teammem.OpWrite, RedactedAt: &at, RedactedBy: "bob"}, teammem.EGone},
	} {
		up, err := teammem.RestoreUpsert(tc.v)
		if teammem.ErrorCode(err) != tc.code || (err == nil && (up.Key != "a.md" || up.Content != "x")) {
			t.Errorf("RestoreUpsert(version %d) = %+v, %v; want code %q", tc.v.Version, up, err, tc.code)
		}
	}
}

func TestHistoryLimits(t *testing.T) {
	t.Parallel()
	d := teammem.DefaultServerDefaults
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		set        teammem.OrgSettings
		days, max  int
		wantBefore time.Time
	}{
		{teammem.OrgSettings{}, 90, 100, now.AddDate(0, 0, -90)},
		{teammem.OrgSettings{HistoryRetentionDays: 7}, 7, 100, now.AddDate(0, 0, -7)},
		{teammem.OrgSettings{HistoryRetentionDays: 3650, HistoryMaxVersions: 5}, 3650, 5, now.Add(-3650 * 24 * time.Hour)},
	} {
		o := teammem.Org{Settings: tc.set}
		l := o.Limits(d)
		p := o.HistoryPurge(d, now)
		if l.HistoryRetentionDays != tc.days || l.HistoryMaxVersions != tc.max || !p.Before.Equal(tc.wantBefore) || p.MaxPerKey != tc.max {
			t.Errorf("settings %+v: limits %d days / %d versions, purge %+v", tc.set, l.HistoryRetentionDays, l.HistoryMaxVersions, p)
		}
	}
}

// TestRetentionSweep sweeps two orgs with their own retention through a
// real store: each keeps what its own limits say, and tombstones past
// their retention go too.
func TestRetentionSweep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	type spaceOf struct {
		org teammem.Org
		sp  teammem.Space
	}
	var spaces []spaceOf
	for _, set := range []teammem.OrgSettings{{}, {HistoryMaxVersions: 2}} {
		org, err := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "org" + string(rune('a'+len(spaces))), Name: "O", Settings: set})
		if err != nil {
			t.Fatal(err)
		}
		repo, err := st.RepoEnsure(ctx, org.ID, "o/r")
		if err != nil {
			t.Fatal(err)
		}
		sp, err := st.SpaceEnsure(ctx, org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
		if err != nil {
			t.Fatal(err)
		}
		for _, changes := range [][]teammem.EntryChange{
			{{Key: "a.md", Op: teammem.OpWrite, Content: "1"}, {Key: "gone.md", Op: teammem.OpWrite, Content: "g"}},
			{{Key: "a.md", Op: teammem.OpWrite, Content: "2"}}, {{Key: "a.md", Op: teammem.OpWrite, Content: "3"}},
			{{Key: "gone.md", Op: teammem.OpDelete}},
		} {
			if sp, err = teammem.SpaceApply(ctx, st, org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{}, Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
				return changes, nil
			}}); err != nil {
				t.Fatal(err)
			}
		}
		spaces = append(spaces, spaceOf{org, sp})
	}
	r := &teammem.Retention{Store: st, Defaults: teammem.DefaultServerDefaults, TombstoneRetention: time.Hour,
		Now: func() time.Time { return time.Now().Add(2 * time.Hour) }}
	res, err := r.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Orgs != 2 || res.Tombstones != 2 || res.Versions != 1 {
		t.Fatalf("sweep = %+v, want 2 orgs, 2 tombstones and the one version over the second org's cap", res)
	}
	for i, want := range []int{3, 2} {
		h, err := st.EntryHistory(ctx, spaces[i].org.ID, spaces[i].sp.ID, "a.md")
		if err != nil || len(h) != want {
			t.Errorf("org %d keeps %d versions of a.md (%v), want %d", i, len(h), err, want)
		}
	}
}
