package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/testing/e2etest"
)

// TestWatchSuppressesAfterPermanentFailure fills a space past the server's
// entry cap under `watch`: the 413 pauses pushes (status shows why), and a
// deletion lifts the pause and the push goes through.
func TestWatchSuppressesAfterPermanentFailure(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "TEAMMEM_DEFAULT_MAX_ENTRIES=3")
	m := newMachine(t, srv, "git@github.com:acme/capped.git")
	m.env = append(m.env, "TEAMMEM_TELEMETRY=1")
	dir := m.memDir()
	cmd := exec.Command(clientBin, "watch", "--debounce", "300ms")
	cmd.Dir, cmd.Env = m.repo, m.env
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	waitLog(t, logs, "watching")
	for i := range 4 {
		m.write(dir, fmt.Sprintf("team/n%d.md", i), "note\n")
	}
	waitLog(t, logs, "pushes paused")
	var st struct {
		Scopes []struct {
			Scope      string `json:"scope"`
			Suppressed string `json:"push_suppressed"`
		} `json:"scopes"`
	}
	if err := json.Unmarshal([]byte(m.must("status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Scopes[0].Scope != "team" || st.Scopes[0].Suppressed != "http_413" {
		t.Fatalf("status while suppressed = %+v", st.Scopes)
	}
	// Another edit does not push while suppressed...
	m.write(dir, "team/n0.md", "edited\n")
	waitLog(t, logs, "not pushed n0.md: pushes are paused (http_413)") // named, with the reason
	time.Sleep(time.Second)
	if strings.Count(logs.String(), "pushes paused") != 1 {
		t.Fatalf("pushed while suppressed:\n%s", logs.String())
	}
	// ...a deletion brings the space under the cap and lifts the pause.
	mark := len(logs.String())
	if err := os.Remove(filepath.Join(dir, "team", "n3.md")); err != nil {
		t.Fatal(err)
	}
	waitLog(t, logs, "a file was deleted; pushing again")
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String()[mark:], " pushed (version") {
		if time.Now().After(deadline) {
			t.Fatalf("no push after the deletion:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	st.Scopes = nil // a fresh decode: an empty reason is omitted from the JSON
	if err := json.Unmarshal([]byte(m.must("status", "--json")), &st); err != nil || st.Scopes[0].Suppressed != "" {
		t.Fatalf("status after the deletion = %+v (%v)\n%s", st.Scopes, err, logs.String())
	}
	// Telemetry reached the server as counters: never content or paths.
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	body := e2etest.Scrape(t, srv)
	for _, want := range []string{`teammem_client_push_suppressed_total{org="default",reason="http_413"} 1`, `teammem_client_events_total{event="tengu_team_mem_sync_push"`} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, "n3.md") {
		t.Error("telemetry leaked a path")
	}
}

func waitLog(t *testing.T, logs *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("log never said %q:\n%s", want, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
