package main_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/teammem/teammem/internal/teammem"
)

// TestReliabilityPullIsASnapshot reads a space while writers change it.
// Every full read must describe one state of the space: its checksum is the
// documented formula over the entries it returns (design §3: clients
// recompute it to verify their mirror), and on /v1 no entry is newer than
// the version the snapshot claims.
func TestReliabilityPullIsASnapshot(t *testing.T) {
	forEachDB(t, func(t *testing.T, dsn string) {
		s := startServer(t, dsn)
		const repo = "acme/snapshot"
		const writers, writes, readers = 4, 40, 4
		var torn, reads atomic.Int64
		var mu sync.Mutex
		var examples []string
		tear := func(format string, args ...any) {
			torn.Add(1)
			mu.Lock()
			if len(examples) < 3 {
				examples = append(examples, fmt.Sprintf(format, args...))
			}
			mu.Unlock()
		}
		c := newRelClient(bootstrapKey)
		if r := c.stockPut(s.URL, repo, map[string]string{"seed.md": "seed\n"}, ""); r.Status != 200 {
			t.Fatalf("seed = %d %s", r.Status, r.Body)
		}
		stop := make(chan struct{})
		var rwg sync.WaitGroup
		for i := range readers {
			rwg.Go(func() {
				rc := newRelClient(bootstrapKey)
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					reads.Add(1)
					if i%2 == 0 {
						checkStockRead(rc, s, repo, tear)
					} else {
						checkV1Read(rc, s, repo, tear)
					}
				}
			})
		}
		var wwg sync.WaitGroup
		for w := range writers {
			wwg.Go(func() {
				wc := newRelClient(bootstrapKey)
				for n := range writes {
					r := wc.stockPut(s.URL, repo, map[string]string{fmt.Sprintf("w%d.md", w): fmt.Sprintf("write %d\n", n)}, "")
					if r.Err != nil || r.Status != 200 {
						t.Errorf("write: %d %v %s", r.Status, r.Err, r.Body)
						return
					}
				}
			})
		}
		wwg.Wait()
		close(stop)
		rwg.Wait()
		if n := torn.Load(); n > 0 {
			t.Errorf("%d of %d reads during %d writes mixed two states of the space, e.g. %v", n, reads.Load(), writers*writes, examples)
		}
	})
}

// checkStockRead pulls through the Claude Code GET and checks the body.
func checkStockRead(c *relClient, s *server, repo string, tear func(string, ...any)) {
	r := c.do("GET", s.URL+"/api/claude_code/team_memory?repo="+repo, nil)
	var b pullBody
	if r.Status != 200 || json.Unmarshal(r.Body, &b) != nil {
		tear("GET team_memory = %d %v", r.Status, r.Err)
		return
	}
	if want := teammem.SpaceChecksum(b.Content.EntryChecksums); b.Checksum != want {
		tear("team_memory version %d says checksum %s, its entries hash to %s", b.Version, b.Checksum, want)
	}
}

// checkV1Read reads the /v1 snapshot and checks it.
func checkV1Read(c *relClient, s *server, repo string, tear func(string, ...any)) {
	r := c.do("GET", s.URL+"/v1/repos/"+repo+"/team", nil)
	var snap struct {
		Version  int64  `json:"version"`
		Checksum string `json:"checksum"`
		Entries  []struct {
			Key      string `json:"key"`
			Checksum string `json:"checksum"`
			Version  int64  `json:"version"`
		} `json:"entries"`
	}
	if r.Status != 200 || json.Unmarshal(r.Body, &snap) != nil {
		tear("GET snapshot = %d %v", r.Status, r.Err)
		return
	}
	sums := map[string]string{}
	for _, e := range snap.Entries {
		sums[e.Key] = e.Checksum
		if e.Version > snap.Version {
			tear("snapshot version %d holds %s written at version %d", snap.Version, e.Key, e.Version)
			return
		}
	}
	if want := teammem.SpaceChecksum(sums); snap.Checksum != want {
		tear("snapshot version %d says checksum %s, its entries hash to %s", snap.Version, snap.Checksum, want)
	}
}
