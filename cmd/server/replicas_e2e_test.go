package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/testing/testpg"
)

// TestReplicasAnnounceEachOther runs two server processes on one Postgres
// database: a push through one is announced on the other's event stream
// within a second, and read back through it.
func TestReplicasAnnounceEachOther(t *testing.T) {
	dsn := testpg.NewDatabase(t)
	a := startServer(t, dsn)
	b := startServer(t, dsn)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", b.URL+"/v1/repos/acme/shared/events", nil)
	req.Header.Set("Authorization", "Bearer "+bootstrapKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	waitFor(t, lines, ": connected", 10*time.Second)

	var latencies []time.Duration
	onB := newStock(t, b, "acme/shared")
	for i := range 5 {
		onB.pull() // B caches the head it serves
		c := newStock(t, a, "acme/shared")
		c.pull()
		start := time.Now()
		if r := c.push(map[string]string{"note.md": strings.Repeat("x", i+1)}); r.Status != 200 {
			t.Fatalf("push through replica a = %+v", r)
		}
		waitFor(t, lines, `"version":`+string(rune('1'+i)), time.Second)
		latencies = append(latencies, time.Since(start))
		// B's cached head was invalidated by A's write: no stale 304.
		if status, body := onB.pull(); status != 200 || body.Version != int64(i+1) {
			t.Fatalf("pull through b after push %d = %d version %d", i+1, status, body.Version)
		}
	}
	t.Logf("push on a → event on b: %v", latencies)
	_, body := newStock(t, b, "acme/shared").pull()
	if body.Content.Entries["note.md"] != "xxxxx" {
		t.Fatalf("replica b reads %q", body.Content.Entries["note.md"])
	}
}

// waitFor reads lines until one contains want, failing after d.
func waitFor(t *testing.T, lines <-chan string, want string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stream closed waiting for %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q within %v", want, d)
		}
	}
}

// TestReplicasShareRevocations revokes a key through one replica: the other,
// which has the key's principal cached, refuses it from then on.
func TestReplicasShareRevocations(t *testing.T) {
	dsn := testpg.NewDatabase(t)
	a := startServer(t, dsn)
	b := startServer(t, dsn)
	owner := newStock(t, a, "o/r")
	st, _, body := owner.do("POST", a.URL+"/v1/org/keys", map[string]any{"name": "laptop"}, nil)
	if st != 201 {
		t.Fatalf("create key = %d %s", st, body)
	}
	var created struct{ ID, Key string }
	if err := json.Unmarshal(body, &created); err != nil {
		t.Fatal(err)
	}
	user := newStock(t, b, "o/r")
	user.key = created.Key
	if st, _, _ := user.do("GET", b.URL+"/v1/me", nil, nil); st != 200 { // cached on b now
		t.Fatalf("new key on b = %d", st)
	}
	if st, _, body := owner.do("DELETE", a.URL+"/v1/org/keys/"+created.ID, nil, nil); st != 200 {
		t.Fatalf("revoke = %d %s", st, body)
	}
	deadline := time.Now().Add(time.Second)
	for {
		st, _, _ := user.do("GET", b.URL+"/v1/me", nil, nil)
		if st == 401 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("b still accepts the revoked key: %d", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
