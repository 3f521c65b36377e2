package jobs_test

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/server/store"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// drivers opens a fresh, migrated store of each driver.
var drivers = map[string]func(t *testing.T) string{
	"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "jobs.db") },
	"postgres": func(t *testing.T) string { return testpg.NewDatabase(t) },
}

// mustStore opens dsn's store and migrates river's schema on it, twice (a
// second run changes nothing).
func mustStore(t *testing.T, dsn string) teammem.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for range 2 {
		if err := jobs.Migrate(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Ping(ctx); err != nil {
		t.Fatalf("Ping after river's migrations: %v", err)
	}
	return st
}

// mustQueue opens a queue on st, lets register add its workers, starts it
// and stops it when the test ends.
func mustQueue(t *testing.T, st teammem.Store, register func(q *jobs.Queue)) *jobs.Queue {
	t.Helper()
	q, err := jobs.New(context.Background(), st, nil, jobs.Config{FetchPoll: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	register(q)
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := q.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return q
}

// countArgs is a test job: its worker counts the runs of each N.
type countArgs struct {
	N int `json:"n"`
}

func (countArgs) Kind() string { return "test_count" }

type countWorker struct {
	river.WorkerDefaults[countArgs]
	runs *sync.Map // N → *atomic.Int64
}

func (w *countWorker) Work(_ context.Context, j *river.Job[countArgs]) error {
	n, _ := w.runs.LoadOrStore(j.Args.N, new(atomic.Int64))
	n.(*atomic.Int64).Add(1)
	return nil
}

// waitFor polls cond until it holds; the deadline only bounds a failure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func runsOf(runs *sync.Map, n int) int64 {
	v, ok := runs.Load(n)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

func TestJobRunsOnce(t *testing.T) {
	for name, dsn := range drivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := mustStore(t, dsn(t))
			runs := &sync.Map{}
			q := mustQueue(t, st, func(q *jobs.Queue) {
				if err := jobs.AddWorker(q, &countWorker{runs: runs}); err != nil {
					t.Fatal(err)
				}
			})
			if _, err := q.Insert(context.Background(), countArgs{N: 1}, nil); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the job", func() bool { return runsOf(runs, 1) > 0 })
			// A second job behind it: once it ran, the first had its chance
			// to run twice.
			if _, err := q.Insert(context.Background(), countArgs{N: 2}, nil); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the second job", func() bool { return runsOf(runs, 2) > 0 })
			if n := runsOf(runs, 1); n != 1 {
				t.Fatalf("the job ran %d times", n)
			}
		})
	}
}

// sweeper counts retention sweeps.
type sweeper struct{ n atomic.Int64 }

func (s *sweeper) SweepRetention(context.Context) error { s.n.Add(1); return nil }

func TestRetentionRunsAtStart(t *testing.T) {
	for name, dsn := range drivers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			st := mustStore(t, dsn(t))
			var s sweeper
			mustQueue(t, st, func(q *jobs.Queue) {
				if err := jobs.AddRetention(q, &s); err != nil {
					t.Fatal(err)
				}
			})
			waitFor(t, "the sweep at start", func() bool { return s.n.Load() > 0 })
		})
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	st := mustStore(t, drivers["sqlite"](t))
	if _, err := jobs.New(context.Background(), st, nil, jobs.Config{DreamWorkers: -1}); err == nil {
		t.Fatal("negative DreamWorkers accepted")
	}
}

// Two queues on one Postgres database are two replicas: each inserts ten
// jobs, and every job runs exactly once, on one of them.
func TestReplicasRunEachJobOnce(t *testing.T) {
	dsn := testpg.NewDatabase(t)
	runs := &sync.Map{}
	var queues []*jobs.Queue
	for range 2 {
		st := mustStore(t, dsn)
		queues = append(queues, mustQueue(t, st, func(q *jobs.Queue) {
			if err := jobs.AddWorker(q, &countWorker{runs: runs}); err != nil {
				t.Fatal(err)
			}
		}))
	}
	const per = 10
	for i, q := range queues {
		for j := range per {
			if _, err := q.Insert(context.Background(), countArgs{N: i*per + j}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	all := func() bool {
		for n := range 2 * per {
			if runsOf(runs, n) == 0 {
				return false
			}
		}
		return true
	}
	waitFor(t, "every job", all)
	// One more job after them all: by the time it ran, a second run of any
	// of the others would have been fetched too.
	if _, err := queues[0].Insert(context.Background(), countArgs{N: 1000}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the last job", func() bool { return runsOf(runs, 1000) > 0 })
	for n := range 2 * per {
		if got := runsOf(runs, n); got != 1 {
			t.Errorf("job %d ran %d times", n, got)
		}
	}
}
