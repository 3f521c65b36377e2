package main_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRealClaudeCode runs the real Claude Code binary (2.1.332, installed
// by scripts/test into its cache and named by TEAMMEM_CLAUDE_BIN) through
// `teammem claude -p …` against a real teammem server and a fake Messages
// API, all on loopback: its native memory-store sync must pull, push,
// update, delete and resolve a create conflict with teammem, keep a secret
// local, and meet teammem's own client on the server. As root it re-runs
// itself in a fresh network namespace that has nothing but lo, and the
// proxy refuses every non-loopback dial in any case: no packet leaves.
func TestRealClaudeCode(t *testing.T) {
	bin := os.Getenv("TEAMMEM_CLAUDE_BIN")
	if bin == "" {
		if ci() {
			t.Fatal("TEAMMEM_CLAUDE_BIN is not set under CI; scripts/test installs Claude Code 2.1.332 and sets it")
		}
		t.Skip("real Claude Code binary not installed: run scripts/test, which installs it and sets TEAMMEM_CLAUDE_BIN")
	}
	if os.Geteuid() == 0 && os.Getenv("TEAMMEM_TEST_NETNS") == "" {
		if _, err := exec.LookPath("unshare"); err == nil {
			inNetns(t)
			return
		}
		t.Log("unshare not found: running without a network namespace (the proxy still refuses non-loopback dials)")
	}
	srv := startServer(t)
	fake := fakeMessages(t)
	ours := newMachine(t, srv, "git@github.com:acme/widgets.git")   // teammem's own client
	native := newMachine(t, srv, "git@github.com:acme/widgets.git") // stock Claude Code through teammem claude
	ours.write(ours.memDir(), "team/seeded.md", "# Seeded\nfrom teammem's own client\n")
	ours.must("sync")

	logPath := filepath.Join(t.TempDir(), "proxy.log")
	native.env = append(native.env, "TEAMMEM_CLAUDE_BIN="+bin, "ANTHROPIC_BASE_URL="+fake, "ANTHROPIC_API_KEY=test",
		"TEAMMEM_PROXY_UPSTREAM="+fake, "TEAMMEM_PROXY_LOOPBACK_ONLY=1", "TEAMMEM_PROXY_LOG="+logPath,
		"CLAUDE_CODE_MEMORY_PUSH_DELETE_MODE=immediate", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_MEMORY_PERIODIC_RESYNC=1")
	mem := native.memDir()
	mount := filepath.Join(mem, "team", "teammem")
	session := func(step string) {
		t.Helper()
		out, errOut, code := native.runTimeout(90*time.Second, "claude", "--", "-p", "hello", "--debug-file", filepath.Join(t.TempDir(), "debug.txt"))
		if code != 0 {
			if strings.Contains(errOut, "resolve the team memory store") && !ci() {
				t.Skipf("the server has no memory-store routes yet (branch memstores not merged): %s", strings.TrimSpace(errOut))
			}
			t.Fatalf("%s: teammem claude exited %d:\n%s%s", step, code, out, errOut)
		}
		b, _ := os.ReadFile(logPath)
		t.Logf("%s: requests Claude Code sent to teammem:\n%s", step, b)
		os.WriteFile(logPath, nil, 0o600) //nolint:errcheck
	}

	// 1. First session: the seeded memory appears in the mount.
	session("first session")
	contains(t, read(t, mount, "seeded.md"), "from teammem's own client")
	if _, err := os.Stat(filepath.Join(mount, ".memory-sync")); err != nil {
		t.Fatalf("no manifest in the mount: %v", err)
	}
	// 2. A new file, an edit and a secret.
	native.write(mount, "notes/local.md", "# Local\nwritten next to stock Claude Code\n")
	native.write(mount, "seeded.md", "# Seeded\nfrom teammem's own client\nedited by Claude Code's sync\n")
	native.write(mount, "secret.md", "aws key AKIAQYLPMN5HHHFPZAM2 and secret 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\n")
	session("edit session")
	ours.must("sync")
	omem := ours.memDir()
	contains(t, read(t, omem, "team/notes/local.md"), "written next to stock Claude Code")
	contains(t, read(t, omem, "team/seeded.md"), "edited by Claude Code's sync")
	if _, err := os.Stat(filepath.Join(omem, "team", "secret.md")); err == nil {
		t.Fatal("the secret-bearing file reached the server")
	}
	// 3. A delete (immediate mode).
	if err := os.Remove(filepath.Join(mount, "notes", "local.md")); err != nil {
		t.Fatal(err)
	}
	session("delete session")
	ours.must("sync")
	if _, err := os.Stat(filepath.Join(omem, "team", "notes", "local.md")); err == nil {
		t.Fatal("the native delete did not reach the server")
	}
	// 4. A create conflict: both sides create clash.md; the local one is
	// newer than the session start, so Claude Code pushes it and meets 409.
	ours.write(omem, "team/clash.md", "from teammem's own client\n")
	ours.must("sync")
	native.write(mount, "clash.md", "from the native client\n")
	future := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(mount, "clash.md"), future, future) //nolint:errcheck
	session("conflict session")
	contains(t, read(t, mount, "clash.md"), "from teammem's own client")
	// teammem's own sync never touched the native mount.
	st := native.status()
	contains(t, st, "synced natively by Claude Code through teammem claude")
}

// inNetns re-runs this test alone in a new network namespace with only lo
// up, and fails when it fails there.
func inNetns(t *testing.T) {
	t.Helper()
	cmd := exec.Command("unshare", "-n", "sh", "-c", `ip link set lo up && exec "$0" "$@"`,
		os.Args[0], "-test.run=^TestRealClaudeCode$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TEAMMEM_TEST_NETNS=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("in a loopback-only network namespace:\n%s", out.String())
	if err != nil {
		t.Fatalf("the test failed in its network namespace: %v", err)
	}
	if strings.Contains(out.String(), "--- SKIP") {
		t.Skip("skipped in its network namespace (see above)")
	}
}

func ci() bool {
	switch os.Getenv("CI") {
	case "", "0", "f", "F", "false", "FALSE", "False":
		return false
	}
	return true
}

// fakeMessages is the fake Anthropic API: a minimal SSE answer to every
// Messages call and 404 to everything else (the CLI tolerates 404 on its
// other first-party calls, reference §3).
func fakeMessages(t *testing.T) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) //nolint:errcheck
		if !strings.HasPrefix(r.URL.Path, "/v1/messages") || r.URL.Path == "/v1/messages/count_tokens" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []struct{ name, data string }{
			{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`},
			{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`},
			{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`},
			{"content_block_stop", `{"type":"content_block_stop","index":0}`},
			{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":1}}`},
			{"message_stop", `{"type":"message_stop"}`},
		} {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data)
		}
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// runTimeout is run with a deadline: a hung claude fails the test instead
// of the whole package.
func (m *machine) runTimeout(limit time.Duration, args ...string) (string, string, int) {
	m.t.Helper()
	cmd := exec.Command(clientBin, args...)
	cmd.Dir = m.repo
	cmd.Env = m.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	timer := time.AfterFunc(limit, func() { _ = cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		m.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// TestStatusShowsNativeScopes checks that a scope handed to Claude Code's
// own sync is shown by status and left alone by teammem's sync.
func TestStatusShowsNativeScopes(t *testing.T) {
	srv := startServer(t)
	m := newMachine(t, srv, "git@github.com:acme/native.git")
	mem := m.memDir()
	m.write(mem, "team/teammem/a.md", "native copy\n")
	m.write(mem, "notes.md", "personal\n")
	h := sha256.Sum256([]byte(mem))
	rec := filepath.Join(m.home, ".config", "teammem", "local", hex.EncodeToString(h[:8]), "native.json")
	m.write(filepath.Dir(rec), "native.json", `{"server":"`+srv+`","repo":"acme/native","team":{"id":"memstore_t","path":"/v1/memory_stores/memstore_t"}}`)
	out := m.must("sync")
	contains(t, out, "synced natively by Claude Code through teammem claude (store memstore_t at team/teammem)")
	contains(t, m.status(), "left alone  team: synced natively by Claude Code through teammem claude (store memstore_t at team/teammem); teammem leaves it alone: the team scope is not synced")
	other := newMachine(t, srv, "git@github.com:acme/native.git")
	other.must("sync")
	if _, err := os.Stat(filepath.Join(other.memDir(), "team", "teammem", "a.md")); err == nil {
		t.Fatal("teammem's own sync pushed a file of the native mount")
	}
	contains(t, read(t, other.memDir(), "notes.md"), "") // personal is still teammem's
}
