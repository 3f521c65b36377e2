package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// replicaSet is three server processes sharing one Postgres database, each
// with an event stream open on the test repo.
type replicaSet struct {
	servers []*server
	streams []*eventStream
	names   []string
}

const replicaRepo = "acme/replicas"

// startReplicas starts the replicas one after the other (so that exactly one
// bootstraps the database) with writes limited to 1/s, bursts of 2, per key.
func startReplicas(t *testing.T) *replicaSet {
	dsn := testpg.NewDatabase(t)
	rs := &replicaSet{names: []string{"a", "b", "c"}}
	for range rs.names {
		s := startServer(t, dsn, "TEAMMEM_WRITE_RATE=1", "TEAMMEM_WRITE_BURST=2")
		rs.servers = append(rs.servers, s)
		rs.streams = append(rs.streams, openEventStream(t, s.URL, replicaRepo))
	}
	return rs
}

// mustKey creates a fresh API key of the bootstrap owner through s: rate
// limits are per key, so each part of the test starts with full buckets.
func mustKey(t *testing.T, s *server, name string) *relClient {
	t.Helper()
	r := newRelClient(bootstrapKey).do("POST", s.URL+"/v1/org/keys", map[string]any{"name": name})
	var created struct{ Key string }
	if r.Err != nil || r.Status != 201 || json.Unmarshal(r.Body, &created) != nil || created.Key == "" {
		t.Fatalf("create key: %d %v %s", r.Status, r.Err, r.Body)
	}
	return newRelClient(created.Key)
}

// stockPull is a full Claude Code GET, with If-None-Match when inm is set.
func stockPull(t *testing.T, c *relClient, s *server, inm string) (relResp, pullBody) {
	t.Helper()
	var h []string
	if inm != "" {
		h = []string{"If-None-Match", `"` + inm + `"`}
	}
	r := c.do("GET", s.URL+"/api/claude_code/team_memory?repo="+replicaRepo, nil, h...)
	var body pullBody
	if r.Err != nil {
		t.Fatalf("pull: %v", r.Err)
	}
	if r.Status == 200 {
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("pull body: %v", err)
		}
	}
	return r, body
}

// TestReliabilityReplicas runs three replicas on one Postgres database.
// Writes through each (both APIs) are announced on every replica's event
// stream and read back through every other (Claude Code GET and /v1
// snapshot). A stale If-None-Match on any replica after a write elsewhere
// gets 200 with the new checksum, never 304, once the replica has heard of
// the write. Rate limits are per replica, as ratelimit.go documents: with
// TEAMMEM_WRITE_RATE=1 and TEAMMEM_WRITE_BURST=2 one key gets two writes
// through each replica before that replica answers 429, six in all.
func TestReliabilityReplicas(t *testing.T) {
	rs := startReplicas(t)
	t.Run("read back and announced everywhere", func(t *testing.T) { rs.readBack(t) })
	t.Run("no stale 304 across replicas", func(t *testing.T) { rs.caches(t) })
	t.Run("rate limits are per replica", func(t *testing.T) { rs.rateLimits(t) })
	t.Logf("servers logged: a %s, b %s, c %s", statusString(serverStatuses(rs.servers[0].logs.String())),
		statusString(serverStatuses(rs.servers[1].logs.String())), statusString(serverStatuses(rs.servers[2].logs.String())))
}

// readBack writes through each replica with each API and reads every write
// back through all three.
func (rs *replicaSet) readBack(t *testing.T) {
	for i, w := range rs.servers {
		c := mustKey(t, w, "readback-"+rs.names[i]) // two writes per replica: within the burst
		for _, api := range []string{"stock", "v1"} {
			key := fmt.Sprintf("via-%s-%s.md", rs.names[i], api)
			content := fmt.Sprintf("written through replica %s with the %s API\n", rs.names[i], api)
			var r relResp
			if api == "stock" {
				r = c.stockPut(w.URL, replicaRepo, map[string]string{key: content}, "")
			} else {
				r = c.batch(w.URL, replicaRepo, []relUpsert{{Key: key, Content: content}})
			}
			if r.Err != nil || r.Status != 200 {
				t.Fatalf("write %s through %s: %d %v %s", key, rs.names[i], r.Status, r.Err, r.Body)
			}
			for j, rd := range rs.servers {
				rs.streams[j].waitVersion(t, r.version(), relTimeout)
				_, body := stockPull(t, c, rd, "")
				if body.Content.Entries[key] != content || body.Version < r.version() {
					t.Errorf("%s written through %s, read through %s: %q at version %d", key, rs.names[i], rs.names[j],
						body.Content.Entries[key], body.Version)
				}
				snap := c.mustSnapshot(t, rd.URL, replicaRepo)
				found := false
				for _, e := range snap.Entries {
					found = found || (e.Key == key && e.Content == content && e.Checksum == checksum(content))
				}
				if !found || snap.Version < r.version() {
					t.Errorf("%s written through %s: missing from the /v1 snapshot of %s (version %d)", key, rs.names[i], rs.names[j], snap.Version)
				}
				g := c.do("GET", rd.URL+"/v1/repos/"+replicaRepo+"/team/entries/"+key, nil)
				if g.Status != 200 || string(g.Body) != content {
					t.Errorf("GET entry %s through %s = %d %q", key, rs.names[j], g.Status, g.Body)
				}
			}
		}
	}
}

// caches makes each replica cache the head, writes through another, and
// pulls again with the old ETag.
func (rs *replicaSet) caches(t *testing.T) {
	keys := make([]*relClient, len(rs.servers))
	for i, s := range rs.servers {
		keys[i] = mustKey(t, s, "cache-"+rs.names[i]) // each replica writes twice below
	}
	reader := newRelClient(bootstrapKey) // reads are not rate limited
	staleWindow, lateDrops := 0, 0
	pairs := 0
	for wi, w := range rs.servers {
		for ri, rd := range rs.servers {
			if ri == wi {
				continue
			}
			pairs++
			_, before := stockPull(t, reader, rd, "") // rd now holds the head in its cache
			if r, _ := stockPull(t, reader, rd, before.Checksum); r.Status != 304 {
				t.Fatalf("pull through %s with the current ETag = %d, want 304", rs.names[ri], r.Status)
			}
			key := fmt.Sprintf("cache/%s-then-%s.md", rs.names[wi], rs.names[ri])
			r := keys[wi].stockPut(w.URL, replicaRepo, map[string]string{key: "x\n"}, "")
			if r.Err != nil || r.Status != 200 {
				t.Fatalf("write through %s: %d %v %s", rs.names[wi], r.Status, r.Err, r.Body)
			}
			// Right after the acknowledgement the other replica may not
			// have heard of the write yet: counted, not asserted.
			if now, _ := stockPull(t, reader, rd, before.Checksum); now.Status == 304 {
				staleWindow++
			}
			// The writing replica dropped its own cached head before answering.
			if own, _ := stockPull(t, reader, w, before.Checksum); own.Status != 200 {
				t.Errorf("stale ETag on the writing replica %s right after its write = %d, want 200", rs.names[wi], own.Status)
			}
			rs.streams[ri].waitVersion(t, r.version(), relTimeout)
			// The stream and the cache hear of the write from one broker
			// delivery but in two goroutines: allow the cache a moment.
			after, body := stockPull(t, reader, rd, before.Checksum)
			for try := 0; after.Status == 304 && try < 10; try++ {
				lateDrops++
				time.Sleep(10 * time.Millisecond)
				after, body = stockPull(t, reader, rd, before.Checksum)
			}
			if after.Status != 200 || body.Checksum != r.spaceChecksum() || body.Content.Entries[key] != "x\n" {
				t.Errorf("stale ETag on %s after a write through %s (announced) = %d, checksum %s, want 200 with %s",
					rs.names[ri], rs.names[wi], after.Status, body.Checksum, r.spaceChecksum())
			}
			if body.Checksum != teammem.SpaceChecksum(body.Content.EntryChecksums) {
				t.Errorf("pull through %s: checksum %s does not match its entries", rs.names[ri], body.Checksum)
			}
		}
	}
	t.Logf("%d writer/reader pairs; a stale 304 right after the write's acknowledgement, before the reader's replica heard of it: %d; after the write was announced there: %d",
		pairs, staleWindow, lateDrops)
}

// spaceChecksum reads the space checksum of a 200 write response.
func (r relResp) spaceChecksum() string {
	var v struct {
		Checksum string `json:"checksum"`
	}
	_ = json.Unmarshal(r.Body, &v)
	return v.Checksum
}

// rateLimits fires three writes with one fresh key at each replica at once.
// Token buckets are per replica (ratelimit.go): each replica admits the
// burst of two and refuses the third, so the key gets six writes in all,
// three times the burst a single bucket would allow. The bucket refills at
// 1/s, so a run whose writes straddled a refill (one replica admitting all
// three) is repeated with a new key.
func (rs *replicaSet) rateLimits(t *testing.T) {
	for attempt := 1; ; attempt++ {
		c := mustKey(t, rs.servers[0], fmt.Sprintf("limits-%d", attempt))
		got := make([][]relResp, len(rs.servers))
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i, s := range rs.servers {
			for n := range 3 {
				wg.Go(func() {
					key := fmt.Sprintf("limits/%d-%s-%d.md", attempt, rs.names[i], n)
					r := c.stockPut(s.URL, replicaRepo, map[string]string{key: "limited\n"}, "")
					mu.Lock()
					got[i] = append(got[i], r)
					mu.Unlock()
				})
			}
		}
		wg.Wait()
		refilled := false
		var summary []string
		for i, rr := range got {
			ok, limited := 0, 0
			for _, r := range rr {
				switch {
				case r.Err == nil && r.Status == 200:
					ok++
				case r.Err == nil && r.Status == 429:
					limited++
					if r.Header.Get("Retry-After") == "" || r.errorType() != "rate_limited" {
						t.Errorf("429 through %s without Retry-After or type rate_limited: %v %s", rs.names[i], r.Header, r.Body)
					}
				default:
					t.Fatalf("write through %s: %d %v %s", rs.names[i], r.Status, r.Err, r.Body)
				}
			}
			refilled = refilled || ok == 3
			if ok < 2 || (ok == 2 && limited != 1) {
				t.Errorf("replica %s admitted %d of 3 writes of a fresh key (%d × 429); want the burst of 2", rs.names[i], ok, limited)
			}
			summary = append(summary, fmt.Sprintf("%s: %d×200 %d×429", rs.names[i], ok, limited))
		}
		if refilled && attempt < 3 {
			t.Logf("attempt %d straddled a refill (%s); again with a new key", attempt, strings.Join(summary, ", "))
			continue
		}
		if refilled {
			t.Errorf("three attempts straddled a refill: %s", strings.Join(summary, ", "))
		}
		t.Logf("one key, three writes at each replica at once: %s", strings.Join(summary, ", "))
		return
	}
}
