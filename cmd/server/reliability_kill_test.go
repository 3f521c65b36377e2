package main_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Kill loop shape: killRounds SIGKILLs, each killMinDelay to killMaxDelay
// into a round of load from killPushers pushers writing killWidth keys per
// push.
const (
	killRounds   = 5
	killPushers  = 8
	killWidth    = 3
	killMinDelay = 100 * time.Millisecond
	killMaxDelay = 400 * time.Millisecond
	killRepo     = "acme/crash"
)

// killEnv lifts the entry cap: every push adds keys, and a 413 would end the load.
var killEnv = []string{"TEAMMEM_DEFAULT_MAX_ENTRIES=1000000", "TEAMMEM_MAX_ENTRIES_CEILING=1000000"}

// crashRun is the bookkeeping of one kill loop.
type crashRun struct {
	url      atomic.Pointer[string] // the live server's URL
	acks     ackLog
	roundAck atomic.Int64 // pushes acknowledged since the last restart

	mu      sync.Mutex
	unacked [][]string // keys of pushes that got no 200: all or none may be stored
	answers tally
}

// TestReliabilityKill SIGKILLs the server again and again while pushers
// write through both APIs, restarting it on the same database each time.
// Every push writes several new keys at once. At the end every push that
// was acknowledged is stored with its content, every push that was not is
// stored whole or not at all, and fsck finds every space consistent.
func TestReliabilityKill(t *testing.T) {
	forEachDB(t, func(t *testing.T, dsn string) {
		seed := uint64(time.Now().UnixNano())
		rnd := rand.New(rand.NewPCG(seed, 1))
		t.Logf("seed %d", seed)
		s := startServer(t, dsn, killEnv...)
		run := &crashRun{}
		run.url.Store(&s.URL)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for p := range killPushers {
			wg.Go(func() { run.pusher(p, stop) })
		}
		servers := []*server{s}
		for round := range killRounds {
			run.waitForAck(t, round)
			time.Sleep(killMinDelay + time.Duration(rnd.Int64N(int64(killMaxDelay-killMinDelay))))
			s.kill(t)
			s = startServer(t, dsn, killEnv...)
			servers = append(servers, s)
			run.roundAck.Store(0)
			run.url.Store(&s.URL)
		}
		run.waitForAck(t, killRounds)
		close(stop)
		wg.Wait()

		status, body := newStock(t, s, killRepo).pull()
		if status != 200 {
			t.Fatalf("final pull = %d", status)
		}
		if lost := run.acks.missing(body.Content.Entries); len(lost) > 0 {
			t.Errorf("%d acknowledged keys lost: %v", len(lost), lost)
		}
		torn := 0
		for _, keys := range run.unacked {
			stored := 0
			for _, k := range keys {
				if _, ok := body.Content.Entries[k]; ok {
					stored++
				}
			}
			if stored != 0 && stored != len(keys) {
				torn++
				t.Errorf("unacknowledged push stored in part: %d of %v", stored, keys)
			}
		}
		s.stop(t)
		fsck := runFsck(t, dsn)
		logged := map[int]int{}
		for _, srv := range servers {
			for c, n := range serverStatuses(srv.logs.String()) {
				logged[c] += n
			}
		}
		if n := count5xx(logged); n > 0 {
			t.Errorf("%d answers were 5xx: %s", n, statusString(logged))
		}
		t.Logf("%d kills; %d pushes acknowledged (%d keys), %d not (%d of them stored whole, %d torn); clients saw %s; servers logged %s; fsck: %s",
			killRounds, run.acks.n/killWidth, run.acks.n, len(run.unacked), run.storedWhole(body.Content.Entries), torn, &run.answers, statusString(logged), fsck)
	})
}

// waitForAck waits until the live server has acknowledged a push, so that
// every kill lands on a server under load.
func (run *crashRun) waitForAck(t *testing.T, round int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for run.roundAck.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("round %d: no push was acknowledged; answers so far %s", round, &run.answers)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// pusher writes killWidth new keys per push, alternating the Claude Code
// PUT and the /v1 batch, until stop is closed. Keys are never reused, so a
// push that committed without its answer reaching us cannot be mistaken
// for a lost one.
func (run *crashRun) pusher(id int, stop <-chan struct{}) {
	c := newRelClient(bootstrapKey)
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		entries := map[string]string{}
		var keys []string
		for i := range killWidth {
			k := fmt.Sprintf("p%d/w%05d-%d.md", id, n, i)
			entries[k] = fmt.Sprintf("pusher %d push %d part %d\n", id, n, i)
			keys = append(keys, k)
		}
		base := *run.url.Load()
		var r relResp
		if n%2 == 0 {
			r = c.stockPut(base, killRepo, entries, "")
		} else {
			var ups []relUpsert
			for _, k := range keys {
				ups = append(ups, relUpsert{Key: k, Content: entries[k]})
			}
			r = c.batch(base, killRepo, ups)
		}
		run.answers.add(r)
		if r.Err == nil && r.Status == 200 {
			for _, k := range keys {
				run.acks.add(k, entries[k], r.version())
			}
			run.roundAck.Add(1)
			continue
		}
		run.mu.Lock()
		run.unacked = append(run.unacked, keys)
		run.mu.Unlock()
		if r.Err != nil {
			time.Sleep(5 * time.Millisecond) // the server is down: do not spin
		}
	}
}

// storedWhole counts the unacknowledged pushes that committed anyway.
func (run *crashRun) storedWhole(entries map[string]string) int {
	n := 0
	for _, keys := range run.unacked {
		if _, ok := entries[keys[0]]; ok {
			n++
		}
	}
	return n
}
