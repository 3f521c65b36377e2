package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Helpers shared by the reliability tests (reliability_*_test.go). Unlike
// stockClient, whose do fails the test on any transport error, relClient
// reports errors to its caller: the fault-injection tests expect refused and
// reset connections while a server is down.

// relTimeout bounds every request of a relClient. A request that runs into
// it is a hang, which the tests report as such.
const relTimeout = 20 * time.Second

// relClient sends requests with one key and its own connection pool.
type relClient struct {
	hc  *http.Client
	key string
}

func newRelClient(key string) *relClient {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return &relClient{hc: &http.Client{Timeout: relTimeout, Transport: tr}, key: key}
}

// relResp is one answer; Err is set instead when no answer arrived.
type relResp struct {
	Status int
	Header http.Header
	Body   []byte
	Err    error
	Took   time.Duration
}

// timedOut reports whether the request ran into the client timeout.
func (r relResp) timedOut() bool {
	var ne interface{ Timeout() bool }
	return r.Err != nil && errors.As(r.Err, &ne) && ne.Timeout()
}

// errorType returns the JSON error body's type, "" when there is none.
func (r relResp) errorType() string {
	var eb struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(r.Body, &eb) != nil {
		return ""
	}
	return eb.Error.Type
}

// do sends body (nil, []byte sent raw, or a value sent as JSON) with the
// client's key and the headers given as name, value pairs.
func (c *relClient) do(method, url string, body any, headers ...string) relResp {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return relResp{Err: err}
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, url, rd)
	if err != nil {
		return relResp{Err: err}
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	start := time.Now()
	res, err := c.hc.Do(req)
	if err != nil {
		return relResp{Err: err, Took: time.Since(start)}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return relResp{Status: res.StatusCode, Header: res.Header, Body: b, Err: err, Took: time.Since(start)}
}

// stockPut is a Claude Code PUT of entries with an optional If-Match.
func (c *relClient) stockPut(base, repo string, entries map[string]string, ifMatch string) relResp {
	var h []string
	if ifMatch != "" {
		h = []string{"If-Match", `"` + ifMatch + `"`}
	}
	return c.do("PUT", base+"/api/claude_code/team_memory?repo="+repo, map[string]any{"entries": entries}, h...)
}

// relUpsert is one upsert of a /v1 batch; a nil Base sends no precondition.
type relUpsert struct {
	Key     string  `json:"key"`
	Content string  `json:"content"`
	Base    *string `json:"base,omitempty"`
}

// batch posts upserts to repo's team space.
func (c *relClient) batch(base, repo string, upserts []relUpsert) relResp {
	return c.do("POST", base+"/v1/repos/"+repo+"/team/batch", map[string]any{"upserts": upserts})
}

// relConflict is one entry of a 409's details.conflicts.
type relConflict struct {
	Key      string `json:"key"`
	Checksum string `json:"checksum"`
	Deleted  bool   `json:"deleted"`
}

// conflicts parses a batch 409's conflicting keys.
func (r relResp) conflicts() []relConflict {
	var eb struct {
		Error struct {
			Details struct {
				Conflicts []relConflict `json:"conflicts"`
			} `json:"details"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &eb)
	return eb.Error.Details.Conflicts
}

// version reads the version of a 200 write response (both APIs carry one).
func (r relResp) version() int64 {
	var v struct {
		Version int64 `json:"version"`
	}
	_ = json.Unmarshal(r.Body, &v)
	return v.Version
}

// snapshot is a /v1 space snapshot.
type snapshot struct {
	Version  int64  `json:"version"`
	Checksum string `json:"checksum"`
	Entries  []struct {
		Key      string `json:"key"`
		Content  string `json:"content"`
		Checksum string `json:"checksum"`
	} `json:"entries"`
}

// mustSnapshot reads repo's team space through /v1.
func (c *relClient) mustSnapshot(t *testing.T, base, repo string) snapshot {
	t.Helper()
	r := c.do("GET", base+"/v1/repos/"+repo+"/team", nil)
	if r.Err != nil || r.Status != 200 {
		t.Fatalf("snapshot of %s: %d %v %s", repo, r.Status, r.Err, r.Body)
	}
	var s snapshot
	if err := json.Unmarshal(r.Body, &s); err != nil {
		t.Fatalf("snapshot body: %v", err)
	}
	return s
}

// tally counts answers by status, and transport errors, from many goroutines.
type tally struct {
	mu     sync.Mutex
	status map[int]int
	errs   int
}

func (t *tally) add(r relResp) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == nil {
		t.status = map[int]int{}
	}
	if r.Err != nil {
		t.errs++
		return
	}
	t.status[r.Status]++
}

// total returns the number of answers and of transport errors.
func (t *tally) total() (answers, errs int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, n := range t.status {
		answers += n
	}
	return answers, t.errs
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return fmt.Sprintf("%s, %d transport errors", statusString(t.status), t.errs)
}

// statusString prints a status histogram in status order.
func statusString(m map[int]int) string {
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", m[c], c))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// serverStatuses counts the statuses of the requests a server logged: every
// request the API handled, whoever sent it.
func serverStatuses(logs string) map[int]int {
	out := map[int]int{}
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Msg    string `json:"msg"`
			Status int    `json:"status"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "request" {
			out[line.Status]++
		}
	}
	return out
}

// count5xx sums the 5xx statuses of a histogram.
func count5xx(m map[int]int) int {
	n := 0
	for c, k := range m {
		if c >= 500 {
			n += k
		}
	}
	return n
}

// runFsck runs `teammem-server fsck` on dsn and returns its output; it fails
// the test when fsck reports problems.
func runFsck(t *testing.T, dsn string) string {
	t.Helper()
	cmd := exec.Command(serverBin, "fsck")
	cmd.Env = append(os.Environ(), "TEAMMEM_DATABASE_URL="+dsn)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fsck: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// kill ends the server with SIGKILL and reaps it, so its cleanup does nothing.
func (s *server) kill(t *testing.T) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill: %v", err)
	}
	_ = s.cmd.Wait() // "signal: killed" is the expected outcome
}

// quit ends a hung server with SIGQUIT, so that the Go runtime writes every
// goroutine's stack to its log, and returns the end of that log.
func (s *server) quit(t *testing.T) string {
	t.Helper()
	if s.cmd.ProcessState == nil {
		_ = s.cmd.Process.Signal(syscall.SIGQUIT)
		done := make(chan struct{})
		go func() {
			_ = s.cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	}
	logs := s.logs.String()
	return logs[max(0, len(logs)-20000):]
}

// ackLog records acknowledged writes: per key, the content of the write with
// the highest space version, so concurrent writers of one key can be judged
// by commit order.
type ackLog struct {
	mu   sync.Mutex
	keys map[string]ack
	n    int
}

type ack struct {
	content string
	version int64
}

func (a *ackLog) add(key, content string, version int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.keys == nil {
		a.keys = map[string]ack{}
	}
	a.n++
	if cur, ok := a.keys[key]; !ok || version > cur.version {
		a.keys[key] = ack{content: content, version: version}
	}
}

// count returns the number of acknowledged keys written.
func (a *ackLog) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// missing returns the acknowledged keys whose content in entries is not the
// acknowledged one.
func (a *ackLog) missing(entries map[string]string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for k, v := range a.keys {
		if got, ok := entries[k]; !ok || got != v.content {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// eventStream is an open /v1 event stream's data lines.
type eventStream struct{ lines chan string }

// openEventStream subscribes to repo's events and waits for ": connected".
func openEventStream(t *testing.T, base, repo string) *eventStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/v1/repos/"+repo+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+bootstrapKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("events = %d", res.StatusCode)
	}
	es := &eventStream{lines: make(chan string, 4096)}
	go func() {
		defer res.Body.Close()
		defer close(es.lines)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			select {
			case es.lines <- sc.Text():
			default: // a reader that fell behind only misses versions it skips anyway
			}
		}
	}()
	es.waitLine(t, ": connected", 10*time.Second)
	return es
}

// waitLine reads lines until one contains want.
func (es *eventStream) waitLine(t *testing.T, want string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-es.lines:
			if !ok {
				t.Fatalf("event stream closed waiting for %q", want)
			}
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q on the event stream within %v", want, d)
		}
	}
}

// waitVersion reads events until one announces version v or later.
func (es *eventStream) waitVersion(t *testing.T, v int64, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case l, ok := <-es.lines:
			if !ok {
				t.Fatalf("event stream closed waiting for version %d", v)
			}
			var data struct {
				Version int64 `json:"version"`
			}
			if rest, found := strings.CutPrefix(l, "data: "); found && json.Unmarshal([]byte(rest), &data) == nil && data.Version >= v {
				return
			}
		case <-deadline:
			t.Fatalf("no event for version %d within %v", v, d)
		}
	}
}
