// Package e2etest holds what the end-to-end tests of cmd/server and
// cmd/client share: a log buffer safe for concurrent writers, starting the
// built teammem-server binary on a random port, and reading its metrics.
package e2etest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// SyncBuffer is a bytes.Buffer that a process's output and a test may use
// at once.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// MetricsToken is the metrics token of every server StartServer starts.
const MetricsToken = "e2e-metrics-token-0123456789abcdefghij"

// serverDefaults come before the caller's env, which may override them:
// no metrics listener (the default one, 127.0.0.1:9464, would be fought
// over by servers running side by side) and /metrics on the API listener
// for MetricsToken, which Scrape sends.
var serverDefaults = []string{"TEAMMEM_METRICS_ADDR=off", "TEAMMEM_METRICS_TOKEN=" + MetricsToken}

// StartServer runs the teammem-server binary bin with the environment,
// serverDefaults and env (which should set TEAMMEM_ADDR=127.0.0.1:0), waits
// for its "listening" log line, then for /readyz to answer 200 (the secret
// rules compile after the server listens), as a load balancer would, and
// returns its URL, the process and its stderr. The caller stops the process.
func StartServer(tb testing.TB, bin string, env ...string) (url string, cmd *exec.Cmd, logs *SyncBuffer) {
	tb.Helper()
	cmd = exec.Command(bin)
	cmd.Env = append(append(os.Environ(), serverDefaults...), env...)
	pr, pw := io.Pipe()
	logs = &SyncBuffer{}
	cmd.Stderr = io.MultiWriter(pw, logs)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "teammem-server listening" {
				addr <- line.Addr
			}
		}
	}()
	deadline := time.After(30 * time.Second)
	select {
	case a := <-addr:
		url = "http://" + a
	case <-deadline:
		_ = cmd.Process.Kill()
		tb.Fatalf("server did not start; logs:\n%s", logs.String())
		return "", cmd, logs
	}
	for {
		if res, err := http.Get(url + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return url, cmd, logs
			}
		}
		select {
		case <-deadline:
			_ = cmd.Process.Kill()
			tb.Fatalf("server never got ready; logs:\n%s", logs.String())
			return "", cmd, logs
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Scrape returns the metrics of the server at url (as StartServer returned
// it) in the Prometheus text format, asking with MetricsToken.
func Scrape(tb testing.TB, url string) string {
	tb.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+MetricsToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("scrape %s/metrics: %v", url, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		tb.Fatalf("scrape %s/metrics: %d %v\n%s", url, res.StatusCode, err, body)
	}
	return string(body)
}
