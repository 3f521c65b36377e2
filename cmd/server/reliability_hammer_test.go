package main_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// Hammer shape: 32 stock clients and 32 /v1 clients, hammerOps acknowledged
// writes each, all on one team space.
const (
	hammerStock   = 32
	hammerV1      = 32
	hammerOps     = 8
	hammerGroup   = 4   // /v1 clients sharing one key, so that bases conflict
	hammerRetries = 400 // attempts per write before a client gives up
	hammerRepo    = "acme/hammer"
	// hammerHang is far beyond any healthy run (seconds): past it the server
	// is taken for hung.
	hammerHang = 3 * time.Minute
)

// hammer is the shared bookkeeping of one run.
type hammer struct {
	acks      ackLog
	v1        tally
	retries   atomic.Int64 // stock pushes that ended in 412 after their probes
	conflicts atomic.Int64 // /v1 batches answered 409
	commits   atomic.Int64 // acknowledged writes (a /v1 one acknowledges two keys)
	maxTries  atomic.Int64 // most attempts one write needed
}

// tried records that one write took n attempts.
func (h *hammer) tried(n int) {
	for {
		cur := h.maxTries.Load()
		if int64(n) <= cur || h.maxTries.CompareAndSwap(cur, int64(n)) {
			return
		}
	}
}

// TestReliabilityHammer runs 32 stock-protocol clients and 32 /v1 clients
// against one repo's team space at once. Stock clients push their own keys
// with If-Match and resolve 412 by probing hashes; /v1 clients send
// per-entry bases, groups of them share a key, and each 409 turns the
// conflict's current checksum into the next base. No request may fail with
// a 5xx; every acknowledged write must be in the final state (per key, the
// one that committed last); each client must see its versions strictly
// increase; the space version must count the acknowledged writes exactly;
// and the checksum must be the documented formula over the final entries.
func TestReliabilityHammer(t *testing.T) {
	forEachDB(t, func(t *testing.T, dsn string) {
		s := startServer(t, dsn)
		h := &hammer{}
		var wg sync.WaitGroup
		for i := range hammerStock {
			wg.Go(func() { h.stockWorker(t, s, i) })
		}
		for i := range hammerV1 {
			wg.Go(func() { h.v1Worker(t, s, i) })
		}
		finished := make(chan struct{})
		go func() {
			wg.Wait()
			close(finished)
		}()
		select {
		case <-finished:
		case <-time.After(hammerHang):
			// The stock clients have no timeout: end the server so that they
			// return, and show where it was stuck.
			dump := s.quit(t)
			<-finished
			t.Fatalf("the clients were still running after %v; the server's goroutines:\n%s", hammerHang, dump)
		}
		if t.Failed() {
			return
		}

		status, body := newStock(t, s, hammerRepo).pull()
		if status != 200 {
			t.Fatalf("final pull = %d", status)
		}
		if lost := h.acks.missing(body.Content.Entries); len(lost) > 0 {
			t.Errorf("%d acknowledged writes lost or overwritten out of order: %v", len(lost), lost)
		}
		wantKeys := hammerStock*2 + hammerV1 + hammerV1/hammerGroup
		if len(body.Content.Entries) != wantKeys {
			t.Errorf("final state has %d keys, want %d", len(body.Content.Entries), wantKeys)
		}
		// Every acknowledged write is one commit; refused ones commit nothing.
		if body.Version != h.commits.Load() {
			t.Errorf("space version %d, but %d writes were acknowledged", body.Version, h.commits.Load())
		}
		sums := map[string]string{}
		for k, v := range body.Content.Entries {
			sums[k] = checksum(v)
			if body.Content.EntryChecksums[k] != sums[k] {
				t.Errorf("entry checksum of %s is %s, content hashes to %s", k, body.Content.EntryChecksums[k], sums[k])
			}
		}
		if want := teammem.SpaceChecksum(sums); body.Checksum != want {
			t.Errorf("final checksum %s, recomputed %s", body.Checksum, want)
		}
		snap := newRelClient(bootstrapKey).mustSnapshot(t, s.URL, hammerRepo)
		if snap.Checksum != body.Checksum || snap.Version != body.Version || len(snap.Entries) != wantKeys {
			t.Errorf("/v1 snapshot (version %d, %s, %d entries) disagrees with the stock pull", snap.Version, snap.Checksum, len(snap.Entries))
		}
		logged := serverStatuses(s.logs.String())
		if n := count5xx(logged); n > 0 {
			t.Errorf("the server answered %d requests with 5xx: %s", n, statusString(logged))
		}
		t.Logf("%d acknowledged writes; stock pushes that exhausted their probes: %d; /v1 409s: %d; most attempts for one write: %d; /v1 answers %s; server saw %s",
			h.commits.Load(), h.retries.Load(), h.conflicts.Load(), h.maxTries.Load(), &h.v1, statusString(logged))
	})
}

// stockWorker alternates writes between two keys of its own, re-pushing
// after a push that still hit 412 once its probes were used up, as the
// watcher does on the next edit.
func (h *hammer) stockWorker(t *testing.T, s *server, id int) {
	c := newStock(t, s, hammerRepo)
	c.pull()
	local := map[string]string{}
	var last int64
	for op := range hammerOps {
		key := fmt.Sprintf("stock-%02d/note-%d.md", id, op%2)
		local[key] = fmt.Sprintf("stock client %d, write %d\n", id, op)
		var r putResult
		try := 0
		for ; ; try++ {
			if r = c.push(local); r.Status != 412 {
				break
			}
			h.retries.Add(1)
			if try == hammerRetries {
				t.Errorf("stock client %d: write %d still conflicts after %d pushes", id, op, try)
				return
			}
			time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond) // jitter breaks lockstep
		}
		h.tried(try + 1)
		if r.Status != 200 || r.Body == nil {
			t.Errorf("stock client %d: write %d = %+v", id, op, r)
			return
		}
		v := int64(r.Body["version"].(float64))
		if v <= last {
			t.Errorf("stock client %d: version %d after %d", id, v, last)
		}
		last = v
		h.commits.Add(1)
		h.acks.add(key, local[key], v)
	}
}

// v1Worker writes its own key and its group's shared key in one batch with
// per-entry bases; a 409 updates the bases from the conflicts and retries.
func (h *hammer) v1Worker(t *testing.T, s *server, id int) {
	c := newRelClient(bootstrapKey)
	own := fmt.Sprintf("v1-%02d/own.md", id)
	shared := fmt.Sprintf("shared/group-%d.md", id/hammerGroup)
	base := map[string]string{own: "", shared: ""} // "" = must not exist yet
	var last int64
	for op := range hammerOps {
		content := fmt.Sprintf("v1 client %d, write %d\n", id, op)
		var r relResp
		try := 0
		for ; ; try++ {
			ups := []relUpsert{{Key: own, Content: content}, {Key: shared, Content: content}}
			for i := range ups {
				b := base[ups[i].Key]
				ups[i].Base = &b
			}
			r = c.batch(s.URL, hammerRepo, ups)
			h.v1.add(r)
			if r.Err != nil || r.Status != 409 {
				break
			}
			h.conflicts.Add(1)
			for _, cf := range r.conflicts() {
				base[cf.Key] = cf.Checksum
			}
			if try == hammerRetries {
				t.Errorf("v1 client %d: write %d still conflicts after %d batches", id, op, try)
				return
			}
		}
		h.tried(try + 1)
		if r.Err != nil || r.Status != 200 {
			t.Errorf("v1 client %d: write %d = %d %v %s", id, op, r.Status, r.Err, r.Body)
			return
		}
		v := r.version()
		if v <= last {
			t.Errorf("v1 client %d: version %d after %d", id, v, last)
		}
		last = v
		base[own], base[shared] = checksum(content), checksum(content)
		h.commits.Add(1)
		h.acks.add(own, content, v)
		h.acks.add(shared, content, v)
	}
}
