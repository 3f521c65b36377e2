package dreamworker_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/server/dreamworker"
	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// forDrivers runs fn once on SQLite and once on Postgres.
func forDrivers(t *testing.T, fn func(t *testing.T, st teammem.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "t.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		db, err := postgres.Open(t.Context(), testpg.NewDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db)
	})
}

// scanner is the real secret scanner, compiled once for the package.
var scanner = sync.OnceValues(secretscan.New)

// bundle is a store with an org, its member, an API server for the one
// write path, and a dream runner on a started job queue.
type bundle struct {
	t       *testing.T
	st      teammem.Store
	org     teammem.Org
	user    teammem.User
	key     teammem.APIKey
	api     *httpapi.Server
	runner  *dreamworker.Runner
	metrics *telemetry.Metrics
}

// setup builds a bundle whose dreams run model (by any id); mutate tunes
// the worker's config.
func setup(t *testing.T, st teammem.Store, model llm.Model, mutate func(*dreamworker.Config)) *bundle {
	t.Helper()
	ctx := context.Background()
	sc, err := scanner()
	if err != nil {
		t.Fatal(err)
	}
	org, err := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "acme",
		Settings: teammem.OrgSettings{Poisoning: teammem.PoisoningReject}})
	if err != nil {
		t.Fatal(err)
	}
	user, err := st.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "ann", Role: teammem.RoleMember})
	if err != nil {
		t.Fatal(err)
	}
	_, prefix := teammem.NewKeyString()
	key, err := st.KeyCreate(ctx, org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: "ann", Prefix: prefix, Hash: []byte(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	b := &bundle{t: t, st: st, org: org, user: user, key: key, metrics: telemetry.New()}
	b.api = httpapi.New(st, secretscan.NewOrgScanner(sc), httpapi.Config{Defaults: teammem.DefaultServerDefaults}, nil, b.metrics)
	cfg := dreamworker.Config{Models: []string{"m1"}, NewModel: func(string) (llm.Model, error) { return model, nil },
		Heartbeat: 50 * time.Millisecond, Snooze: 50 * time.Millisecond,
		// The periodic reaper must not fail a live dream whose heartbeat a
		// loaded machine delayed; TestReap calls Reap itself.
		StaleAfter: time.Minute}
	if mutate != nil {
		mutate(&cfg)
	}
	b.runner = dreamworker.New(cfg)
	if err := jobs.Migrate(ctx, st); err != nil {
		t.Fatal(err)
	}
	q, err := jobs.New(ctx, st, nil, jobs.Config{FetchPoll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.runner.Register(dreamworker.RegisterParams{Queue: q, Store: st, Writer: b.api, Metrics: b.metrics.Dreams}); err != nil {
		t.Fatal(err)
	}
	qctx, cancel := context.WithCancel(context.Background())
	if err := q.Start(qctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		q.Stop(sctx)
		cancel()
	})
	return b
}

// principal is the org's member as the API would authenticate her.
func (b *bundle) principal() teammem.Principal {
	return teammem.Principal{Org: b.org, User: b.user, Key: b.key}
}

// inputStore creates an API store holding files.
func (b *bundle) inputStore(files map[string]string) teammem.MemoryStore {
	b.t.Helper()
	ctx := context.Background()
	m, err := b.st.MemoryStoreCreate(ctx, b.org.ID, teammem.MemoryStoreCreateParams{Name: "notes"})
	if err != nil {
		b.t.Fatal(err)
	}
	var req teammem.WriteRequest
	for k, v := range files {
		req.Upserts = append(req.Upserts, teammem.Upsert{Key: k, Content: v})
	}
	if _, err := b.api.WriteDream(ctx, teammem.WriteCall{Principal: b.principal(), Repo: m.Repo.Slug, Scope: m.Space.Scope, Store: &m,
		Request: req}); err != nil {
		b.t.Fatal(err)
	}
	return m
}

// dream creates a pending dream of input and enqueues it.
func (b *bundle) dream(input teammem.MemoryStore, behavior teammem.DreamBehavior) teammem.Dream {
	b.t.Helper()
	ctx := context.Background()
	d, err := b.st.DreamCreate(ctx, b.org.ID, teammem.Dream{ID: teammem.NewDreamID(), OrgID: b.org.ID, InputSpaceID: input.Space.ID,
		InputStoreUID: input.Space.UID, Model: "m1", ModelSpeed: "standard", Behavior: behavior,
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond), CreatorUserID: b.user.ID, CreatorKeyID: b.key.ID})
	if err != nil {
		b.t.Fatal(err)
	}
	if err := b.runner.Enqueue(ctx, d); err != nil {
		b.t.Fatal(err)
	}
	return d
}

// waitReleased polls the dream until its worker released it.
func (b *bundle) waitReleased(id string) teammem.Dream {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := b.st.DreamGet(context.Background(), b.org.ID, id)
		if err != nil {
			b.t.Fatal(err)
		}
		if d.Status.Final() && d.ReleasedAt != nil {
			return d
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("dream %s still %s (released %v)", id, d.Status, d.ReleasedAt)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// files returns a store's live memories.
func (b *bundle) files(spaceID int64) map[string]string {
	b.t.Helper()
	es, err := b.st.EntriesList(context.Background(), b.org.ID, spaceID, true)
	if err != nil {
		b.t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range es {
		out[e.Key] = e.Content
	}
	return out
}
