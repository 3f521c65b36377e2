package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// stallEnv is a SQLite store with two orgs, each with an owner and a team
// space.
type stallEnv struct {
	ctx      context.Context
	path     string
	db       *DB
	a, b     teammem.Org
	ua, ub   teammem.User
	spA, spB teammem.Space
}

func newStallEnv(t *testing.T) *stallEnv {
	t.Helper()
	e := &stallEnv{ctx: context.Background(), path: filepath.Join(t.TempDir(), "teammem.db")}
	var err error
	if e.db, err = Open(e.ctx, e.path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db.Close() })
	org := func(slug string) (teammem.Org, teammem.User, teammem.Space) {
		o, err := e.db.OrgCreate(e.ctx, teammem.OrgCreateParams{Slug: slug, Name: slug})
		if err != nil {
			t.Fatal(err)
		}
		u, err := e.db.UserCreate(e.ctx, o.ID, teammem.UserCreateParams{Handle: "owner", Role: teammem.RoleOwner})
		if err != nil {
			t.Fatal(err)
		}
		repo, err := e.db.RepoEnsure(e.ctx, o.ID, slug+"/app")
		if err != nil {
			t.Fatal(err)
		}
		sp, err := e.db.SpaceEnsure(e.ctx, o.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
		if err != nil {
			t.Fatal(err)
		}
		return o, u, sp
	}
	e.a, e.ua, e.spA = org("alpha")
	e.b, e.ub, e.spB = org("bravo")
	return e
}

// apply writes key=content into org's space and returns the space after.
func (e *stallEnv) apply(ctx context.Context, org teammem.Org, u teammem.User, sp teammem.Space, key, content string) (teammem.Space, error) {
	return teammem.SpaceApply(ctx, e.db, org.ID, sp.ID, teammem.ApplyParams{Actor: teammem.Actor{UserID: u.ID},
		Plan: func(teammem.Space, map[string]teammem.Entry, func(string) (string, error)) ([]teammem.EntryChange, error) {
			return []teammem.EntryChange{{Key: key, Op: teammem.OpWrite, Content: content}}, nil
		}})
}

// holdExport starts a memory export of org A's space whose reader stops
// after the first entry, holding its snapshot, until release is called.
func (e *stallEnv) holdExport(t *testing.T) (release func()) {
	t.Helper()
	started, stop, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		first := true
		_, err := e.db.MemoriesEach(e.ctx, e.a.ID, e.spA.ID, true, func(teammem.Space, teammem.Entry) error {
			if first {
				first = false
				close(started)
				<-stop
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
	}()
	<-started
	return func() { close(stop); <-done }
}

// versions writes n versions of r.md into org A's space, each replaced by
// the next one, and returns their numbers (none of them is live).
func (e *stallEnv) versions(t *testing.T, n int) []int64 {
	t.Helper()
	var vs []int64
	for i := range n + 1 {
		var err error
		if e.spA, err = e.apply(e.ctx, e.a, e.ua, e.spA, "r.md", fmt.Sprintf("secret %d\n", i)); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, e.spA.Version)
	}
	return vs[:n]
}

// redactLoop has org A redact the next of versions, and redact the first
// one again (a no-op), about once a millisecond (as one client redacting
// in a loop over HTTP at best would), until stop is closed; wait returns
// how many new redactions it made.
func (e *stallEnv) redactLoop(t *testing.T, versions *[]int64, stop <-chan struct{}) (wait func() int) {
	t.Helper()
	var wg sync.WaitGroup
	n := 0
	redact := func(v int64) bool {
		_, _, err := e.db.VersionRedact(e.ctx, e.a.ID, e.spA.ID, teammem.VersionRedactParams{Key: "r.md", Version: v, By: e.ua.ID, At: time.Now()})
		if err != nil {
			t.Error(err)
		}
		return err == nil
	}
	first := (*versions)[0]
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			if len(*versions) > 0 {
				if !redact((*versions)[0]) {
					return
				}
				*versions = (*versions)[1:]
				n++
			}
			if !redact(first) {
				return
			}
		}
	})
	return func() int { wg.Wait(); return n }
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func p99(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)*99)/100]
}

// stallRun is one measurement of TestRedactionNeverStallsOtherOrgs.
type stallRun struct {
	alone, under []time.Duration // org B's writes
	redactions   int             // org A's, while under
	stalled      time.Duration   // a write of B that took 1000× its median alone
}

// measure alternates rounds of org B's writes alone and while org A holds
// its export and redacts, rounds × perRound writes each.
func (e *stallEnv) measure(t *testing.T, writeB func() time.Duration, versions *[]int64, rounds, perRound int) stallRun {
	t.Helper()
	var r stallRun
	for range rounds {
		for range perRound {
			r.alone = append(r.alone, writeB())
		}
		release := e.holdExport(t)
		stop := make(chan struct{})
		wait := e.redactLoop(t, versions, stop)
		for range perRound {
			d := writeB()
			r.under = append(r.under, d)
			if d > 1000*median(r.alone) { // a stall: no need to see more of them
				r.stalled = d
				break
			}
		}
		close(stop)
		r.redactions += wait()
		release()
		if r.stalled > 0 {
			break
		}
	}
	return r
}

// TestRedactionNeverStallsOtherOrgs: org A holds a slow export of its own
// space open (a reader on an old snapshot) and redacts in a loop; org B's
// p99 write latency stays within 4× of its latency alone (on two cores
// org A's redaction loop takes one of them, which alone has cost 2–3× on
// a loaded machine; the stall this guards against cost 30,000×). Both are
// measured in the same run, in 100 alternating rounds of 10 writes, so
// that load from outside the test falls on both alike; a measurement over
// the bound is repeated, up to three in all, as machines shared with other
// work have bursts no test controls (a stall fails every one of them).
// Before issue 21 every redaction ended in a TRUNCATE checkpoint in the
// writer's turn, which waited out the 10 s busy timeout for the export's
// reader, and every org's writes waited behind it: 10 s against 0.3 ms.
func TestRedactionNeverStallsOtherOrgs(t *testing.T) {
	e := newStallEnv(t)
	for i := range 20 { // something to export
		var err error
		if e.spA, err = e.apply(e.ctx, e.a, e.ua, e.spA, fmt.Sprintf("e%02d.md", i), "exported\n"); err != nil {
			t.Fatal(err)
		}
	}
	spB, seq := e.spB, 0
	writeB := func() time.Duration {
		seq++
		start := time.Now()
		var err error
		if spB, err = e.apply(e.ctx, e.b, e.ub, spB, "b.md", fmt.Sprintf("b %d\n", seq)); err != nil {
			t.Fatal(err)
		}
		return time.Since(start)
	}
	for range 20 { // warm up the statements and the pages
		writeB()
	}
	const rounds, perRound, attempts = 100, 10, 3
	versions := e.versions(t, attempts*rounds*perRound/4)
	for attempt := 1; ; attempt++ {
		r := e.measure(t, writeB, &versions, rounds, perRound)
		if r.stalled > 0 {
			t.Fatalf("one write of org B took %v while org A redacted under a held export, over 1000× its median write alone (%v)", r.stalled, median(r.alone))
		}
		pa, pu := p99(r.alone), p99(r.under)
		t.Logf("org B's p99 write: %v alone, %v while org A redacted %d times under a held export (%.2f×)", pa, pu, r.redactions, float64(pu)/float64(pa))
		if r.redactions < 10 {
			t.Fatalf("org A redacted only %d times", r.redactions)
		}
		if pu <= 4*pa {
			return
		}
		if attempt == attempts {
			t.Fatalf("org B's p99 write is over 4× its p99 alone while org A redacts under a held export, in %d measurements of %d writes each", attempts, rounds*perRound)
		}
	}
}

// TestRedactAgainAnsweredAtOnce: redacting a version that is redacted
// already needs no writer turn and no checkpoint: it is answered while
// another org holds the writer and a reader holds an old snapshot.
func TestRedactAgainAnsweredAtOnce(t *testing.T) {
	e := newStallEnv(t)
	sp, err := e.apply(e.ctx, e.a, e.ua, e.spA, "r.md", "secret\n")
	if err != nil {
		t.Fatal(err)
	}
	if sp, err = e.apply(e.ctx, e.a, e.ua, sp, "r.md", "clean\n"); err != nil {
		t.Fatal(err)
	}
	redact := func(ctx context.Context) (teammem.EntryVersion, bool, error) {
		return e.db.VersionRedact(ctx, e.a.ID, sp.ID, teammem.VersionRedactParams{Key: "r.md", Version: 1, By: e.ua.ID, At: time.Now()})
	}
	if _, changed, err := redact(e.ctx); err != nil || !changed {
		t.Fatalf("first redaction: changed %v, %v", changed, err)
	}
	release := e.holdExport(t)
	defer release()
	if _, err := e.apply(e.ctx, e.a, e.ua, sp, "x.md", "after the export began\n"); err != nil {
		t.Fatal(err)
	}
	// Org B holds the writer until the redaction returns.
	if err := e.db.turns.acquire(e.ctx, e.b.ID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 5*time.Second) // a guard: a turn would never come
	defer cancel()
	v, changed, err := redact(ctx)
	e.db.turns.release()
	if err != nil || changed || !v.Redacted() {
		t.Fatalf("redacting again while another org holds the writer: %+v, changed %v, %v", v, changed, err)
	}
}

// holding reports which of the database's files contain m.
func (e *stallEnv) holding(t *testing.T, m string) []string {
	t.Helper()
	var found []string
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(e.path + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(m)) {
			found = append(found, "teammem.db"+suffix)
		}
	}
	return found
}

// TestScrubRetriedAfterReaderEnds: a redaction while a reader holds an
// older snapshot is answered at once; the reader keeps the WAL from being
// emptied, so its old frames still hold the bytes, and the scrubber
// retries in the background until, once the reader ended, no file holds
// them, with no write or call to prompt it.
func TestScrubRetriedAfterReaderEnds(t *testing.T) {
	e := newStallEnv(t)
	for i := range 5 { // something to export
		var err error
		if e.spA, err = e.apply(e.ctx, e.a, e.ua, e.spA, fmt.Sprintf("e%d.md", i), "exported\n"); err != nil {
			t.Fatal(err)
		}
	}
	release := e.holdExport(t)
	const m = "ERASE-ME-retried-9d2e"
	sp, err := e.apply(e.ctx, e.a, e.ua, e.spA, "r.md", "leaked "+m+"\n")
	if err != nil {
		t.Fatal(err)
	}
	v := sp.Version
	if sp, err = e.apply(e.ctx, e.a, e.ua, sp, "r.md", "clean\n"); err != nil {
		t.Fatal(err)
	}
	if _, changed, err := e.db.VersionRedact(e.ctx, e.a.ID, sp.ID, teammem.VersionRedactParams{Key: "r.md", Version: v, By: e.ua.ID, At: time.Now()}); err != nil || !changed {
		t.Fatalf("redaction under a held reader: changed %v, %v", changed, err)
	}
	if len(e.holding(t, m)) == 0 || !e.db.ScrubPending() {
		t.Fatal("the reader's snapshot did not keep the bytes in the WAL: this test proves nothing")
	}
	release()
	for deadline := time.Now().Add(30 * time.Second); e.db.ScrubPending(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the scrubber did not finish after the reader ended")
		}
	}
	if got := e.holding(t, m); len(got) > 0 {
		t.Fatalf("after the reader ended and the scrub finished, the marker is still in %v", got)
	}
	if e.db.scrubs.busy.Load() == 0 {
		t.Error("no scrub attempt was kept from finishing while the reader held its snapshot")
	}
}
