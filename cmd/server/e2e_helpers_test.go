package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/teammem/teammem/internal/testing/e2etest"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/testing/testpg"
)

// serverBin is the teammem-server binary built once for the package.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "teammem-e2e")
	if err != nil {
		panic(err)
	}
	serverBin = filepath.Join(dir, "teammem-server")
	out, err := exec.Command("go", "build", "-o", serverBin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building teammem-server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const bootstrapKey = "e2e-bootstrap-key-0123456789abcdefghij"

// server is one running teammem-server process.
type server struct {
	URL  string
	cmd  *exec.Cmd
	logs *syncBuffer
}

type syncBuffer = e2etest.SyncBuffer

// databases lists the drivers every end-to-end test runs on.
func databases(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "teammem.db") },
		"postgres": func(t *testing.T) string { return testpg.NewDatabase(t) },
	}
}

// forEachDB runs fn once per database driver.
func forEachDB(t *testing.T, fn func(t *testing.T, dsn string)) {
	for name, dsn := range databases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, dsn(t))
		})
	}
}

// startServer runs the binary on a random port with env added.
func startServer(t *testing.T, dsn string, env ...string) *server {
	t.Helper()
	url, cmd, logs := e2etest.StartServer(t, serverBin, append([]string{"TEAMMEM_ADDR=127.0.0.1:0", "TEAMMEM_DATABASE_URL=" + dsn,
		"TEAMMEM_BOOTSTRAP_KEY=" + bootstrapKey,
		"TEAMMEM_WRITE_RATE=0", "TEAMMEM_READ_RATE=0"}, env...)...) // tests hammer with one key; rate limiting has its own tests
	s := &server{URL: url, cmd: cmd, logs: logs}
	t.Cleanup(func() { s.stop(t) })
	return s
}

func (s *server) stop(t *testing.T) {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server exited with %v; logs:\n%s", err, s.logs.String())
		}
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		t.Errorf("server did not shut down")
	}
}

// stockClient speaks the Claude Code team memory protocol the way the
// stock client does (reference §3.7, §3.12, §3.13).
type stockClient struct {
	t        *testing.T
	base     string
	key      string
	repo     string
	known    string            // lastKnownChecksum
	server   map[string]string // serverChecksums
	maxEntry int               // serverMaxEntries, 0 = unknown
}

func newStock(t *testing.T, s *server, repo string) *stockClient {
	return &stockClient{t: t, base: s.URL, key: bootstrapKey, repo: repo, server: map[string]string{}}
}

func (c *stockClient) url(hashes bool) string {
	u := c.base + "/api/claude_code/team_memory?repo=" + url.QueryEscape(c.repo)
	if hashes {
		u += "&view=hashes"
	}
	return u
}

func (c *stockClient) do(method, u string, body any, header map[string]string) (int, http.Header, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequestWithContext(context.Background(), method, u, rd)
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("User-Agent", "claude-code/2.1.0")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

type pullBody struct {
	OrganizationID string `json:"organizationId"`
	Repo           string `json:"repo"`
	Version        int64  `json:"version"`
	LastModified   string `json:"lastModified"`
	Checksum       string `json:"checksum"`
	Content        struct {
		Entries        map[string]string `json:"entries"`
		EntryChecksums map[string]string `json:"entryChecksums"`
	} `json:"content"`
}

// pull is a full fetch with If-None-Match; it returns the status and body.
func (c *stockClient) pull() (int, pullBody) {
	c.t.Helper()
	h := map[string]string{}
	if c.known != "" {
		h["If-None-Match"] = `"` + strings.ReplaceAll(c.known, `"`, "") + `"`
	}
	status, hdr, b := c.do("GET", c.url(false), nil, h)
	var body pullBody
	switch status {
	case 200:
		if err := json.Unmarshal(b, &body); err != nil {
			c.t.Fatalf("pull body: %v: %s", err, b)
		}
		c.known = body.Checksum
		if hdr.Get("ETag") != `"`+body.Checksum+`"` {
			c.t.Errorf("ETag %q does not carry checksum %s", hdr.Get("ETag"), body.Checksum)
		}
		c.server = body.Content.EntryChecksums
	case 404:
		c.known = ""
		c.server = map[string]string{}
	case 304:
	default:
		c.t.Fatalf("pull: %d %s", status, b)
	}
	return status, body
}

// probe is the hashes view used after a 412.
func (c *stockClient) probe() {
	c.t.Helper()
	status, _, b := c.do("GET", c.url(true), nil, nil)
	switch status {
	case 404:
		c.known, c.server = "", map[string]string{}
	case 200:
		var body struct {
			Checksum       string            `json:"checksum"`
			EntryChecksums map[string]string `json:"entryChecksums"`
		}
		if err := json.Unmarshal(b, &body); err != nil || body.EntryChecksums == nil {
			c.t.Fatalf("probe body: %v %s", err, b)
		}
		c.known, c.server = body.Checksum, body.EntryChecksums
	default:
		c.t.Fatalf("probe: %d %s", status, b)
	}
}

// putResult is what one push reports.
type putResult struct {
	Status  int
	Body    map[string]any
	Batches int
}

// push uploads the delta of local in batches under 200 000 bytes, chained by
// If-Match, resolving 412 by probing hashes up to twice.
func (c *stockClient) push(local map[string]string) putResult {
	c.t.Helper()
	keys := make([]string, 0, len(local))
	for k := range local {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if c.maxEntry > 0 && len(keys) > c.maxEntry {
		keys = keys[:c.maxEntry]
	}
	for attempt := 0; attempt <= 2; attempt++ {
		var delta []string
		for _, k := range keys {
			if c.server[k] != checksum(local[k]) {
				delta = append(delta, k)
			}
		}
		if len(delta) == 0 {
			return putResult{Status: 200}
		}
		var res putResult
		conflict := false
		for _, batch := range batchByBytes(delta, local) {
			h := map[string]string{}
			if c.known != "" {
				h["If-Match"] = `"` + c.known + `"`
			}
			entries := map[string]string{}
			for _, k := range batch {
				entries[k] = local[k]
			}
			status, _, b := c.do("PUT", c.url(false), map[string]any{"entries": entries}, h)
			res.Status, res.Batches = status, res.Batches+1
			res.Body = map[string]any{}
			_ = json.Unmarshal(b, &res.Body)
			if status == 412 {
				conflict = true
				break
			}
			if status != 200 {
				if status == 413 {
					if d, ok := res.Body["error"].(map[string]any)["details"].(map[string]any); ok && d["error_code"] == "team_memory_too_many_entries" {
						c.maxEntry = int(d["max_entries"].(float64))
					}
				}
				return res
			}
			c.known = res.Body["checksum"].(string)
			for _, k := range batch {
				c.server[k] = checksum(local[k])
			}
		}
		if !conflict {
			return res
		}
		if attempt < 2 {
			c.probe()
		}
	}
	return putResult{Status: 412}
}

// batchByBytes splits sorted keys greedily so each PUT body stays under
// 200 000 bytes (reference §3.13).
func batchByBytes(keys []string, local map[string]string) [][]string {
	var out [][]string
	var cur []string
	size := 14
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(local[k])
		cost := len(kb) + len(vb) + 2
		if size+cost > 200_000 && len(cur) > 0 {
			out = append(out, cur)
			cur, size = nil, 14
		}
		cur = append(cur, k)
		size += cost
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func waitABit() { time.Sleep(50 * time.Millisecond) }
