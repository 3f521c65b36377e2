package main_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/testing/testpg"
)

// Phases of the outage test. A request is counted in the phase in which it
// started and ended, or in phaseSpanning when the phase changed meanwhile.
const (
	phaseBefore = iota
	phaseDown
	phaseAfter
	phaseSpanning
)

var phaseNames = [...]string{"before", "down", "after", "spanning a change"}

// outage is what the load saw in one phase of the test.
type outage struct {
	pulls, pushes, readyz tally
	slowest               atomic.Int64 // longest failing answer, ns
	hung                  atomic.Int64 // requests that ran into the client timeout
	errTypes              sync.Map     // "status type" of failing answers → *atomic.Int64
}

// failed records a request that did not succeed.
func (o *outage) failed(r relResp) {
	if r.timedOut() {
		o.hung.Add(1)
		return
	}
	if r.Err == nil {
		n, _ := o.errTypes.LoadOrStore(fmt.Sprintf("%d %s", r.Status, r.errorType()), new(atomic.Int64))
		n.(*atomic.Int64).Add(1)
	}
	for {
		cur := o.slowest.Load()
		if int64(r.Took) <= cur || o.slowest.CompareAndSwap(cur, int64(r.Took)) {
			return
		}
	}
}

// outageRun is the state of TestReliabilityPostgresDown's load.
type outageRun struct {
	phase  atomic.Int32
	phases [4]outage
	acks   ackLog
	upAt   atomic.Int64 // when the proxy came back, unix ns
	// firstAck is how long after upAt the first push that started after it
	// was acknowledged, ns.
	firstAck atomic.Int64
}

// send runs one request and counts it in its phase's tally (which picks
// pushes, pulls or readyz), reporting the phase.
func (run *outageRun) send(which func(*outage) *tally, ok func(relResp) bool, fn func() relResp) (relResp, int) {
	p0 := run.phase.Load()
	r := fn()
	ph := int(p0)
	if run.phase.Load() != p0 {
		ph = phaseSpanning
	}
	o := &run.phases[ph]
	which(o).add(r)
	if r.Err != nil || !ok(r) {
		o.failed(r)
	}
	return r, ph
}

func pushes(o *outage) *tally { return &o.pushes }
func pulls(o *outage) *tally  { return &o.pulls }
func readyz(o *outage) *tally { return &o.readyz }

func is200(r relResp) bool      { return r.Status == 200 }
func isAnswered(r relResp) bool { return r.Status < 500 }

// load pushes new keys (both APIs in turn) and pulls until stop is closed.
func (run *outageRun) load(base, repo string, id int, stop <-chan struct{}) {
	cl := newRelClient(bootstrapKey)
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("w%d/%05d.md", id, n)
		content := fmt.Sprintf("writer %d push %d\n", id, n)
		r, ph := run.send(pushes, is200, func() relResp {
			if id%2 == 0 {
				return cl.stockPut(base, repo, map[string]string{key: content}, "")
			}
			return cl.batch(base, repo, []relUpsert{{Key: key, Content: content}})
		})
		if r.Err == nil && r.Status == 200 {
			run.acks.add(key, content, r.version())
			if ph == phaseAfter {
				run.firstAck.CompareAndSwap(0, time.Now().UnixNano()-run.upAt.Load())
			}
		}
		run.send(pulls, isAnswered, func() relResp {
			return cl.do("GET", base+"/api/claude_code/team_memory?repo="+repo, nil)
		})
		time.Sleep(5 * time.Millisecond)
	}
}

// waitAcks waits until n writes were acknowledged.
func (run *outageRun) waitAcks(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for run.acks.count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d pushes acknowledged", run.acks.count(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReliabilityPostgresDown stops Postgres for a few seconds under a steady
// load of pulls and pushes, by cutting a TCP proxy between the server and
// the shared database. While it is down every request must get an answer
// (no hang until the client gives up): 503 with error type "unavailable"
// for anything that needs the database, and /readyz 503. Once it is back,
// pushes must succeed again on their own, the event stream must announce
// writes again, no acknowledged write may be lost and fsck must find the
// space consistent.
func TestReliabilityPostgresDown(t *testing.T) {
	dsn, proxy := viaProxy(t, testpg.NewDatabase(t))
	s := startServer(t, dsn, "TEAMMEM_DEFAULT_MAX_ENTRIES=1000000", "TEAMMEM_MAX_ENTRIES_CEILING=1000000")
	const repo = "acme/pgdown"
	c := newRelClient(bootstrapKey)
	if r := c.stockPut(s.URL, repo, map[string]string{"seed.md": "seed\n"}, ""); r.Status != 200 {
		t.Fatalf("seed push = %d %v %s", r.Status, r.Err, r.Body)
	}
	events := openEventStream(t, s.URL, repo)

	run := &outageRun{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for id := range 6 {
		wg.Go(func() { run.load(s.URL, repo, id, stop) })
	}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			run.send(readyz, is200, func() relResp { return c.do("GET", s.URL+"/readyz", nil) })
			time.Sleep(20 * time.Millisecond)
		}
	})

	run.waitAcks(t, 20)
	proxy.Down()
	run.phase.Store(phaseDown)
	time.Sleep(3 * time.Second)
	run.phase.Store(phaseAfter)
	run.upAt.Store(time.Now().UnixNano())
	proxy.Up(t)
	deadline := time.Now().Add(30 * time.Second)
	for run.firstAck.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no push succeeded within 30 s of Postgres coming back; after: pushes %s", &run.phases[phaseAfter].pushes)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The event stream opened before the outage announces new writes again
	// (this write or a later one of the load: one written before the event
	// listener is back is announced only by the next heartbeat's re-read).
	r := c.stockPut(s.URL, repo, map[string]string{"after.md": "after the outage\n"}, "")
	if r.Status != 200 {
		t.Fatalf("push after recovery = %d %v %s", r.Status, r.Err, r.Body)
	}
	acked := time.Now()
	events.waitVersion(t, r.version(), 30*time.Second)
	eventDelay := time.Since(acked)
	run.acks.add("after.md", "after the outage\n", r.version())
	run.waitAcks(t, run.acks.count()+20)
	close(stop)
	wg.Wait()

	down, after := &run.phases[phaseDown], &run.phases[phaseAfter]
	for i := range run.phases {
		o := &run.phases[i]
		if n := o.hung.Load(); n > 0 {
			t.Errorf("%s: %d requests hung until the client timeout of %v", phaseNames[i], n, relTimeout)
		}
		o.errTypes.Range(func(k, v any) bool {
			var code int
			var typ string
			fmt.Sscanf(k.(string), "%d %s", &code, &typ)
			if code >= 500 && (code != 503 || typ != "unavailable") {
				t.Errorf("%s: %d answers were %q; the design wants 503 with type unavailable", phaseNames[i], v.(*atomic.Int64).Load(), k)
			}
			return true
		})
	}
	if down.readyz.status[503] == 0 || down.readyz.status[200] > 0 {
		t.Errorf("/readyz while Postgres was down: %s, want only 503", &down.readyz)
	}
	if down.pushes.status[200] > 0 || down.pushes.status[503] == 0 {
		t.Errorf("pushes while Postgres was down: %s, want only 503", &down.pushes)
	}
	if after.readyz.status[200] == 0 {
		t.Errorf("/readyz never recovered: %s", &after.readyz)
	}

	snap := c.mustSnapshot(t, s.URL, repo)
	entries := map[string]string{}
	for _, e := range snap.Entries {
		entries[e.Key] = e.Content
	}
	if lost := run.acks.missing(entries); len(lost) > 0 {
		t.Errorf("%d acknowledged writes lost: %v", len(lost), lost)
	}
	s.stop(t)
	for _, l := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(l, `"code":"internal"`) {
			t.Errorf("internal error in the server log: %s", l)
		}
	}
	fsck := runFsck(t, dsn)
	for i := range run.phases {
		o := &run.phases[i]
		t.Logf("%s: pushes %s; pulls %s; readyz %s; failing answers %s, the slowest in %v",
			phaseNames[i], &o.pushes, &o.pulls, &o.readyz, errTypesString(o), time.Duration(o.slowest.Load()))
	}
	t.Logf("first push acknowledged %v after Postgres came back; the event stream opened before the outage announced it (or a later write) %v after its acknowledgement",
		time.Duration(run.firstAck.Load()), eventDelay)
	t.Logf("%d writes acknowledged, %d entries stored; server logged %s; fsck: %s",
		run.acks.count(), len(snap.Entries), statusString(serverStatuses(s.logs.String())), fsck)
}

// errTypesString prints the failing answers of a phase by status and type.
func errTypesString(o *outage) string {
	m := map[string]int64{}
	o.errTypes.Range(func(k, v any) bool {
		m[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return fmt.Sprint(m)
}

// TestReliabilityPostgresCommitCut ends the server's database connection at
// a write's COMMIT: once before Postgres sees it (nothing is written) and
// once after (the write commits but the server cannot know). Either way the
// answer must be 503 "unavailable", not a 500, and the space must stay
// consistent.
func TestReliabilityPostgresCommitCut(t *testing.T) {
	dsn, proxy := viaProxy(t, testpg.NewDatabase(t))
	s := startServer(t, dsn)
	const repo = "acme/commitcut"
	c := newRelClient(bootstrapKey)
	if r := c.stockPut(s.URL, repo, map[string]string{"seed.md": "seed\n"}, ""); r.Status != 200 {
		t.Fatalf("seed push = %d %v %s", r.Status, r.Err, r.Body)
	}
	for _, tc := range []struct {
		name   string
		mode   int32
		stored bool
	}{{"before commit", cutBeforeCommit, false}, {"after commit", cutAfterCommit, true}} {
		key := strings.ReplaceAll(tc.name, " ", "-") + ".md"
		for _, api := range []string{"stock", "v1"} {
			key := api + "-" + key
			proxy.cut.Store(tc.mode)
			var r relResp
			if api == "stock" {
				r = c.stockPut(s.URL, repo, map[string]string{key: tc.name + "\n"}, "")
			} else {
				r = c.batch(s.URL, repo, []relUpsert{{Key: key, Content: tc.name + "\n"}})
			}
			if proxy.cut.Load() != cutNone {
				t.Fatalf("%s, %s: the write sent no COMMIT through the proxy (%d %s)", tc.name, api, r.Status, r.Body)
			}
			for deadline := time.Now().Add(relTimeout); proxy.settled.Load() != proxy.cuts.Load(); {
				if time.Now().After(deadline) {
					t.Fatalf("%s, %s: Postgres never answered the COMMIT", tc.name, api)
				}
				time.Sleep(time.Millisecond) // Postgres has yet to answer the COMMIT it got
			}
			if r.Err != nil || r.Status != 503 || r.errorType() != "unavailable" {
				t.Errorf("%s, %s: answer %d %v %s; want 503 unavailable", tc.name, api, r.Status, r.Err, r.Body)
			}
			snap := c.mustSnapshot(t, s.URL, repo)
			stored := false
			for _, e := range snap.Entries {
				stored = stored || e.Key == key
			}
			if stored != tc.stored {
				t.Errorf("%s, %s: stored = %v, want %v; snapshot version %d with %d entries", tc.name, api, stored, tc.stored, snap.Version, len(snap.Entries))
			}
		}
	}
	s.stop(t)
	t.Logf("fsck: %s", runFsck(t, dsn))
}
