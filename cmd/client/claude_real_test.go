package main_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Credentials of the simulated user that must never reach teammem: the
// Anthropic API key that signs the Messages calls, a Claude.ai session
// token the user set, and the placeholder `teammem claude` sets without
// one (cmd/client/claude_env.go).
const (
	fakeAnthropicKey = "sk-ant-api03-FAKE-real-binary-test-key-0123456789"
	fakeClaudeToken  = "sk-ant-sid01-FAKE-claude-ai-session-token-0123456789"
	placeholderToken = "teammem-proxy-placeholder"
)

// TestRealClaudeCode runs the real Claude Code binary (2.1.332, installed
// by scripts/test into its cache and named by TEAMMEM_CLAUDE_BIN) through
// `teammem claude -p …` against a real teammem server and a fake Anthropic
// API, all on loopback. Its native memory-store sync must pull (E1), list
// (E2), create (E5 with not_exists), update (E6 with the basis
// content_sha256), delete (E7 with expected_content_sha256, immediate mode)
// and resolve a create conflict (E5 → 409 with conflicting_memory_id → E3'
// → adopt or E4), keep a secret local, and meet teammem's own client on the
// server (reference claude-code-memory-stores §4, §6, §10).
//
// A recording front sits before the teammem server and sees every request
// as the server does: the test asserts the request sequence on it, and that
// nothing but the teammem key ever arrives. As root the test re-runs itself
// in a fresh network namespace that has nothing but lo, and the proxy
// refuses every non-loopback dial in any case: no packet leaves.
func TestRealClaudeCode(t *testing.T) {
	bin := claudeBin(t)
	// Without a namespace (a container may deny root new ones) the
	// proxy's loopback-only switch is what keeps every packet on the
	// machine.
	if loopbackOnly(t) {
		return
	}
	srv := startServer(t)
	front := newServerFront(t, srv, serverKey, fakeAnthropicKey, fakeClaudeToken, placeholderToken)
	front.selfCheck()
	fake := fakeMessages(t)
	const remote = "git@github.com:acme/widgets.git"
	ours := newMachine(t, srv, remote)         // teammem's own client, straight to the server
	native := newMachine(t, front.url, remote) // stock Claude Code through teammem claude, via the front
	omem, mem := ours.memDir(), native.memDir()
	mount := filepath.Join(mem, "team", "teammem")

	const seeded = "# Seeded\nfrom teammem's own client\n"
	ours.write(omem, "team/seeded.md", seeded)
	ours.must("sync")
	// A never-synced local copy older than the session: the first pull
	// overwrites it silently (§6.4) and never pushes it.
	native.write(mount, "seeded.md", "# Seeded\nstale local copy\n")
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(mount, "seeded.md"), old, old); err != nil {
		t.Fatal(err)
	}

	logPath := filepath.Join(t.TempDir(), "proxy.log")
	native.env = append(native.env, "TEAMMEM_CLAUDE_BIN="+bin, "ANTHROPIC_BASE_URL="+fake.url, "ANTHROPIC_API_KEY="+fakeAnthropicKey,
		"TEAMMEM_PROXY_UPSTREAM="+fake.url, "TEAMMEM_PROXY_LOOPBACK_ONLY=1", "TEAMMEM_PROXY_LOG="+logPath,
		"CLAUDE_CODE_MEMORY_PUSH_DELETE_MODE=immediate", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_MEMORY_PERIODIC_RESYNC=1")
	native.env = slices.DeleteFunc(native.env, func(e string) bool {
		return strings.HasPrefix(e, "CLAUDE_CODE_SESSION_ACCESS_TOKEN=") || strings.HasPrefix(e, "CLAUDE_MEMORY_STORES=")
	})

	// The variables, as `teammem proxy` and `teammem claude --print-env`
	// show them: the store paths name the stores in the sequences below,
	// the proxy URL carries the run's credentials, and no teammem key.
	envOut, proxyErr := native.startProxyProcess()
	if strings.Contains(envOut, serverKey) {
		t.Fatalf("teammem proxy shows the teammem key:\n%s", envOut)
	}
	vars := exportsOf(envOut)
	proxyURL, err := url.Parse(vars["HTTPS_PROXY"])
	if err != nil || proxyURL.User == nil {
		t.Fatalf("HTTPS_PROXY without credentials: %q", vars["HTTPS_PROXY"])
	}
	if printed := native.must("claude", "--print-env", "--proxy-addr", proxyURL.Host); printed != envOut {
		t.Fatalf("--print-env:\n%s\nteammem proxy:\n%s", printed, envOut)
	}
	stores := storesOf(t, envOut)
	team := stores["team"]
	front.setStores(stores)
	front.take()

	dir := t.TempDir()
	// 0. The real binary with that proxy but without its credentials (a
	// process that only knows the address): every CONNECT gets 407,
	// nothing reaches teammem and nothing is handed over.
	anon := *proxyURL
	anon.User = nil
	direct := exec.Command(bin, "-p", "hello", "--debug-file", filepath.Join(dir, "debug0.txt"))
	direct.Dir = native.repo
	direct.Env = slices.Clone(native.env)
	for k, v := range vars {
		if k == "HTTPS_PROXY" || k == "https_proxy" {
			v = anon.String()
		}
		direct.Env = append(direct.Env, k+"="+v)
	}
	if out, err := runBounded(direct, 60*time.Second); err != nil {
		t.Fatalf("claude without the proxy credentials: %v\n%s", err, out)
	}
	db0, _ := os.ReadFile(filepath.Join(dir, "debug0.txt"))
	if calls := front.memCalls(); len(calls) != 0 {
		t.Fatalf("without the proxy credentials the server saw %v\n%s", calls, syncLines(string(db0)))
	}
	if _, err := os.Stat(native.nativeRecordPath()); err == nil {
		t.Fatal("a session without the proxy credentials triggered the hand-over")
	}
	t.Logf("without the proxy credentials Claude Code's sync said:\n%s", syncLines(string(db0)))
	if strings.Contains(proxyErr.String(), "teammem proxy:") {
		t.Fatalf("teammem proxy reported a failure of its own: %s", proxyErr.String())
	}
	n := 0
	var whole strings.Builder
	// session runs one `claude -p` through `teammem claude` and returns the
	// memory calls the server saw (printed) and claude's debug log.
	session := func(step string, extraEnv ...string) ([]memCall, string) {
		t.Helper()
		n++
		debug := filepath.Join(dir, fmt.Sprintf("debug%d.txt", n))
		out, errOut, code := native.runTimeout(60*time.Second, extraEnv, "claude", "--", "-p", "hello", "--debug-file", debug)
		db, _ := os.ReadFile(debug)
		if code != 0 {
			t.Fatalf("%s: teammem claude exited %d:\n%s%s\ndebug log:\n%s", step, code, out, errOut, syncLines(string(db)))
		}
		calls := front.memCalls()
		var seq strings.Builder
		for _, c := range calls {
			seq.WriteString("  " + c.String() + "\n")
		}
		t.Logf("%s: the memory calls teammem's server saw:\n%sClaude Code's sync said:\n%s", step, seq.String(), syncLines(string(db)))
		fmt.Fprintf(&whole, "%d. %s\n", n, step)
		for _, c := range calls {
			if c.Store != "" {
				fmt.Fprintf(&whole, "  %s\n", c)
			}
		}
		// The proxy's own log names the same calls, in the same form.
		pb, _ := os.ReadFile(logPath)
		os.WriteFile(logPath, nil, 0o600) //nolint:errcheck
		var want []string
		for _, c := range calls {
			if c.Store != "" {
				want = append(want, c.Method+" "+c.Path+query(c.Query)+" → "+fmt.Sprint(c.Status))
			}
		}
		// Concurrent calls may be logged in another order.
		got := strings.Split(strings.TrimSpace(string(pb)), "\n")
		if len(got) == 1 && got[0] == "" {
			got = nil
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: the proxy logged\n%s\nbut the server saw\n%s", step, pb, strings.Join(want, "\n"))
		}
		return calls, string(db)
	}

	// 1. First session (no Claude.ai login: the placeholder opens the
	// gate). Bulk inflate: the seeded memory lands in the mount over the
	// stale copy, and nothing is pushed.
	calls, _ := session("first session")
	first := callsOf(calls, team)
	if len(first) == 0 || first[0].Kind != "E1" || first[0].Status != 200 {
		t.Fatalf("first session: the team store's first call should be E1 (export, full) → 200: %v", first)
	}
	if w := writes(first); len(w) > 0 {
		t.Fatalf("first session: the stale never-synced copy was pushed: %v", w)
	}
	if got := read(t, mount, "seeded.md"); got != seeded {
		t.Fatalf("the first pull did not overwrite the never-synced local copy: %q", got)
	}
	if _, err := os.Stat(filepath.Join(mount, ".memory-sync")); err != nil {
		t.Fatalf("no manifest in the mount: %v", err)
	}

	// 2. With the user's own session token from here on. A new file, an
	// edit and a secret.
	withToken := "CLAUDE_CODE_SESSION_ACCESS_TOKEN=" + fakeClaudeToken
	const local = "# Local\nwritten next to stock Claude Code\n"
	const edited = seeded + "edited by Claude Code's sync\n"
	native.write(mount, "notes/local.md", local)
	native.write(mount, "seeded.md", edited)
	native.write(mount, "secret.md", "aws key AKIAQYLPMN5HHHFPZAM2 and secret 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\n")
	calls, debug := session("edit session", withToken)
	second := callsOf(calls, team)
	if len(second) == 0 || second[0].Kind != "E2" {
		t.Fatalf("edit session: the team store's listing should be E2 (export?view=basic): %v", second)
	}
	upd := one(t, second, "E6", "/seeded.md")
	if upd.Status != 200 || upd.Pre != `{"type":"content_sha256","content_sha256":"`+sha(seeded)+`"}` {
		t.Fatalf("edit session: E6 should carry the basis sha (%s) and succeed: %v", sha(seeded), upd)
	}
	crt := one(t, second, "E5", "/notes/local.md")
	if crt.Status != 200 || crt.Pre != `{"type":"not_exists"}` {
		t.Fatalf("edit session: E5 should carry not_exists and succeed: %v", crt)
	}
	for _, c := range calls {
		if strings.Contains(c.Path, "secret") || strings.Contains(c.Body, "secret") {
			t.Fatalf("the secret-bearing file was sent: %v", c)
		}
	}
	contains(t, debug, "skipping /secret.md (secret detected)")
	contains(t, read(t, mount, "secret.md"), "AKIAQYLPMN5HHHFPZAM2") // stays local
	ours.must("sync")
	if got := read(t, omem, "team/notes/local.md"); got != local {
		t.Fatalf("the native file did not meet teammem's client on the server: %q", got)
	}
	if got := read(t, omem, "team/seeded.md"); got != edited {
		t.Fatalf("the native edit did not reach teammem's client: %q", got)
	}
	if _, err := os.Stat(filepath.Join(omem, "team", "secret.md")); err == nil {
		t.Fatal("the secret-bearing file reached the server")
	}

	// 3. A delete (immediate mode), under the sha the client last synced.
	if err := os.Remove(filepath.Join(mount, "notes", "local.md")); err != nil {
		t.Fatal(err)
	}
	calls, _ = session("delete session", withToken)
	third := callsOf(calls, team)
	if len(third) == 0 || third[0].Kind != "E2" {
		t.Fatalf("delete session: the listing should be E2: %v", third)
	}
	del := one(t, third, "E7", "")
	if del.Status != 200 || del.ID != crt.RespID || del.Query != "expected_content_sha256="+sha(local) {
		t.Fatalf("delete session: E7 should delete %s under expected_content_sha256=%s: %v", crt.RespID, sha(local), del)
	}
	ours.must("sync")
	if _, err := os.Stat(filepath.Join(omem, "team", "notes", "local.md")); err == nil {
		t.Fatal("the native delete did not reach the server")
	}

	// 4. Create conflicts. Claude Code has two new local files; right after
	// the server answered its listing (which lacks them), teammem's own
	// client creates both paths: clash.md with other content, same.md with
	// the same. Both creates meet 409 with conflicting_memory_id; the client
	// looks the path up (E3'), adopts same.md's id and takes the server's
	// clash.md (E4).
	const theirs, same = "from teammem's own client\n", "the same on both sides\n"
	native.write(mount, "clash.md", "from the native client\n")
	native.write(mount, "same.md", same)
	injected := make(chan error, 1)
	var injectedDone atomic.Bool
	front.afterOnce(func(c memCall) bool { return c.Store == team && c.Kind == "E2" }, func() {
		defer injectedDone.Store(true)
		ours.write(omem, "team/clash.md", theirs)
		ours.write(omem, "team/same.md", same)
		_, errOut, code := ours.runQuiet("sync")
		if code != 0 {
			injected <- fmt.Errorf("teammem sync exited %d: %s", code, errOut)
			return
		}
		injected <- nil
	})
	// The session lasts until the cycle has met both conflicts and settled
	// them locally, however long the injection took.
	fake.hold(func() bool {
		if !injectedDone.Load() {
			return false
		}
		b, _ := os.ReadFile(filepath.Join(mount, "clash.md"))
		db, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("debug%d.txt", n)))
		return string(b) == theirs && strings.Contains(string(db), "adopted /same.md")
	})
	calls, debug = session("conflict session", withToken)
	fake.hold(nil)
	select {
	case err := <-injected:
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatal("conflict session: the listing never reached the server, nothing was injected")
	}
	fourth := callsOf(calls, team)
	for _, p := range []string{"/clash.md", "/same.md"} {
		c := one(t, fourth, "E5", p)
		if c.Status != 409 || c.Pre != `{"type":"not_exists"}` || c.ConflictID == "" {
			t.Fatalf("conflict session: E5 %s should meet 409 with conflicting_memory_id: %v", p, c)
		}
		look := after(fourth, c, "E3'")
		if look == nil || look.Query != "limit=100&path_prefix=%2F&depth=1&order_by=path&order=asc" || look.Status != 200 {
			t.Fatalf("conflict session: E5 %s → 409 should be followed by the E3' lookup of /: %v", p, fourth)
		}
		fetch := after(fourth, c, "E4")
		switch p {
		case "/clash.md":
			if fetch == nil || fetch.ID != c.ConflictID || fetch.Status != 200 {
				t.Fatalf("conflict session: differing content should be fetched (E4 %s): %v", c.ConflictID, fourth)
			}
		case "/same.md":
			if fetch != nil && fetch.ID == c.ConflictID {
				t.Fatalf("conflict session: identical content should be adopted, not fetched: %v", fourth)
			}
			contains(t, debug, "adopted /same.md (identical content → "+c.ConflictID+")")
		}
	}
	if got := read(t, mount, "clash.md"); got != theirs {
		t.Fatalf("conflict session: the server's clash.md should win locally: %q", got)
	}
	ours.must("sync")
	if got := read(t, omem, "team/clash.md"); got != theirs {
		t.Fatalf("conflict session: the server's clash.md changed: %q", got)
	}

	// 5. A local edit the first pull keeps (§6.4): kept.md is on the
	// server but not in Claude Code's basis, and the local copy is newer
	// than the session. The pull keeps it; the push then updates it under a
	// precondition the server's copy does not meet (the client has no basis
	// sha for it), meets 409, re-fetches (E4) and the server's copy wins
	// (§6.5).
	ours.write(omem, "team/kept.md", "kept on the server\n")
	ours.must("sync")
	native.write(mount, "kept.md", "a newer local edit\n")
	future := time.Now().Add(time.Minute)
	if err := os.Chtimes(filepath.Join(mount, "kept.md"), future, future); err != nil {
		t.Fatal(err)
	}
	calls, debug = session("kept-edit session", withToken)
	fifth := callsOf(calls, team)
	contains(t, debug, "kept 1 local file(s) that changed or were in use during the pull")
	upd = one(t, fifth, "E6", "") // a 409 names no path: the id is kept.md's
	if i := slices.IndexFunc(fifth, func(c memCall) bool { return c.Kind == "E4" && c.RespPath == "/kept.md" }); i < 0 || fifth[i].ID != upd.ID {
		t.Fatalf("kept-edit session: E6 should update kept.md: %v", fifth)
	}
	if upd.Status != 409 || !strings.HasPrefix(upd.Pre, `{"type":"content_sha256","content_sha256":"`) || strings.Contains(upd.Pre, sha("kept on the server\n")) {
		t.Fatalf("kept-edit session: E6 should carry a precondition the server's copy fails, and meet 409: %v", upd)
	}
	if f := after(fifth, upd, "E4"); f == nil || f.ID != upd.ID || f.Status != 200 || f.RespPath != "/kept.md" {
		t.Fatalf("kept-edit session: the 409 should be followed by E4 %s: %v", upd.ID, fifth)
	}
	if got := read(t, mount, "kept.md"); got != "kept on the server\n" {
		t.Fatalf("kept-edit session: the server's kept.md should win: %q", got)
	}
	t.Logf("the whole run, as teammem's server saw it:\n%s", whole.String())

	// 6. Offline: the API does not answer. The proxy's own 502 carries
	// Anthropic's error envelope naming the cause (and x-should-retry:
	// false), which Claude Code shows; teammem's stderr has one line
	// saying the same, however many requests failed.
	deadLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := deadLn.Addr().String()
	deadLn.Close()
	began := time.Now()
	out, errOut, code := native.runTimeout(150*time.Second, []string{withToken, "ANTHROPIC_BASE_URL=https://api.anthropic.com",
		"TEAMMEM_PROXY_UPSTREAM=http://" + dead}, "claude", "--", "-p", "hello")
	t.Logf("offline session: exit %d after %s\nstdout:\n%s\nstderr:\n%s", code, time.Since(began).Round(time.Millisecond), out, errOut)
	if code == 0 || code == -1 {
		t.Fatalf("offline session: exit %d (0: it worked offline; -1: killed at the deadline)", code)
	}
	var own []string
	for l := range strings.SplitSeq(errOut, "\n") {
		if strings.HasPrefix(l, "teammem proxy: ") {
			own = append(own, l)
		}
	}
	if len(own) != 1 || !strings.Contains(own[0], "cannot reach "+dead) {
		t.Fatalf("offline session: want one stderr line naming the cause, got %q", own)
	}
	if !strings.Contains(out+errOut, "teammem proxy: cannot reach "+dead) {
		t.Fatalf("offline session: Claude Code did not show the proxy's message")
	}

	// Nothing but the teammem key ever reached teammem.
	front.checkCredentials()
	// teammem's own sync never touched the native mount.
	contains(t, native.status(), "synced natively by Claude Code through teammem claude")
}

// claudeBin is the real Claude Code binary TEAMMEM_CLAUDE_BIN names: the
// test skips without one, and fails under CI, where scripts/test installs it.
func claudeBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("TEAMMEM_CLAUDE_BIN")
	if bin == "" {
		if ci() {
			t.Fatal("TEAMMEM_CLAUDE_BIN is not set under CI; scripts/test installs Claude Code 2.1.332 and sets it")
		}
		t.Skip("real Claude Code binary not installed: run scripts/test, which installs it and sets TEAMMEM_CLAUDE_BIN")
	}
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		t.Fatalf("TEAMMEM_CLAUDE_BIN=%s is not an executable file (%v)", bin, err)
	}
	return bin
}

// loopbackOnly keeps a test of a third-party client on loopback. As root
// it re-runs the test in a fresh network namespace holding lo alone and
// returns true: the caller returns, the re-run's verdict is the test's.
// Inside that namespace it checks that lo is indeed alone. Where no
// namespace can be had it says so and returns false: the test must then
// keep its traffic on loopback by other means.
func loopbackOnly(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() == 0 && os.Getenv("TEAMMEM_TEST_NETNS") == "" {
		out, err := exec.Command("unshare", "-n", "true").CombinedOutput()
		if err == nil {
			inNetns(t)
			return true
		}
		t.Logf("no network namespace (unshare -n: %v %s): running without one", err, bytes.TrimSpace(out))
	}
	if os.Getenv("TEAMMEM_TEST_NETNS") != "" {
		// /proc/net/dev lists this namespace's interfaces (sysfs may show
		// the host's).
		b, err := os.ReadFile("/proc/net/dev")
		var ifs []string
		for _, l := range strings.Split(string(b), "\n")[2:] {
			if name, _, ok := strings.Cut(l, ":"); ok {
				ifs = append(ifs, strings.TrimSpace(name))
			}
		}
		if err != nil || !slices.Equal(ifs, []string{"lo"}) {
			t.Fatalf("the network namespace should hold lo alone: %v %v", ifs, err)
		}
	}
	return false
}

// inNetns re-runs this test alone in a new network namespace with only lo
// up, with the binaries already built, and fails when it fails there.
func inNetns(t *testing.T) {
	t.Helper()
	cmd := exec.Command("unshare", "-n", "sh", "-c", `ip link set lo up && exec "$0" "$@"`,
		os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "TEAMMEM_TEST_NETNS=1", binDirEnv+"="+filepath.Dir(clientBin))
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

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func query(q string) string {
	if q == "" {
		return ""
	}
	return "?" + q
}

// syncLines keeps the lines of a claude debug log about its memory sync.
func syncLines(log string) string {
	var b strings.Builder
	for l := range strings.SplitSeq(log, "\n") {
		for _, p := range []string{"multi-store-sync", "memory-watcher", "memory-backend", "memory-stores"} {
			if strings.Contains(l, p) {
				b.WriteString("  " + strings.TrimSpace(l) + "\n")
				break
			}
		}
	}
	return b.String()
}

// storesOf reads the store paths from --print-env's CLAUDE_MEMORY_STORES,
// by scope.
func storesOf(t *testing.T, env string) map[string]string {
	t.Helper()
	for l := range strings.SplitSeq(env, "\n") {
		v, ok := strings.CutPrefix(l, "export CLAUDE_MEMORY_STORES=")
		if !ok {
			continue
		}
		var cfg []struct{ Path, Scope string }
		if err := json.Unmarshal([]byte(strings.Trim(v, "'")), &cfg); err != nil {
			t.Fatalf("CLAUDE_MEMORY_STORES: %v: %s", err, v)
		}
		out := map[string]string{}
		for _, c := range cfg {
			out[c.Scope] = c.Path
		}
		if out["team"] == "" || out["user"] == "" {
			t.Fatalf("CLAUDE_MEMORY_STORES lacks a team or user store: %s", v)
		}
		return out
	}
	t.Fatalf("--print-env has no CLAUDE_MEMORY_STORES:\n%s", env)
	return nil
}

// memCall is one request the teammem server saw, classified by the
// reference's endpoint names (§4.1).
type memCall struct {
	Kind       string // E1 … E7, E3' (a path lookup), or "teammem" (not a store call)
	Store      string // the store path, "" for other calls
	Scope      string
	Method     string
	Path       string // escaped
	Query      string
	ID         string // the memory id in the path (E4, E6, E7)
	MemPath    string // the path in the body (E5)
	Pre        string // the body's precondition, compact JSON
	Body       string
	Status     int
	RespID     string // the id a write answered with
	RespPath   string // and its path
	ConflictID string // error.conflicting_memory_id of a 409
}

func (c memCall) String() string {
	if c.Store == "" {
		return fmt.Sprintf("%s %s%s → %d", c.Method, c.Path, query(c.Query), c.Status)
	}
	s := fmt.Sprintf("%-4s %s <%s>%s%s", c.Kind, c.Method, c.Scope, strings.TrimPrefix(c.Path, c.Store), query(c.Query))
	if c.MemPath != "" {
		s += " path=" + c.MemPath
	}
	if c.Pre != "" {
		s += " precondition=" + c.Pre
	}
	s += fmt.Sprintf(" → %d", c.Status)
	if c.RespID != "" {
		s += " " + c.RespID
		if c.MemPath == "" && c.RespPath != "" {
			s += " " + c.RespPath
		}
	}
	if c.ConflictID != "" {
		s += " conflicting_memory_id=" + c.ConflictID
	}
	return s
}

func callsOf(calls []memCall, store string) []memCall {
	var out []memCall
	for _, c := range calls {
		if c.Store == store {
			out = append(out, c)
		}
	}
	return out
}

// writes are the calls that change a store.
func writes(calls []memCall) []memCall {
	var out []memCall
	for _, c := range calls {
		if c.Kind == "E5" || c.Kind == "E6" || c.Kind == "E7" {
			out = append(out, c)
		}
	}
	return out
}

// one returns the single call of kind for path (E5: the body's path; E6:
// the response's path; "" any).
func one(t *testing.T, calls []memCall, kind, path string) memCall {
	t.Helper()
	var found []memCall
	for _, c := range calls {
		if c.Kind == kind && (path == "" || c.MemPath == path || c.MemPath == "" && c.RespPath == path) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s %s, got %d in %v", kind, path, len(found), calls)
	}
	return found[0]
}

// after returns the first call of kind after c.
func after(calls []memCall, c memCall, kind string) *memCall {
	i := slices.IndexFunc(calls, func(x memCall) bool { return x == c })
	for j := i + 1; i >= 0 && j < len(calls); j++ {
		if calls[j].Kind == kind {
			return &calls[j]
		}
	}
	return nil
}

// serverFront is a recording reverse proxy in front of the teammem server:
// every request arrives there exactly as the server gets it. It keeps
// method, path, query, request body and status (the bodies are the test's
// own memories), and notes any credential but the teammem key.
type serverFront struct {
	t         *testing.T
	url       string
	target    string
	key       string
	forbidden []string
	client    *http.Client

	mu     sync.Mutex
	stores map[string]string
	raw    []memCall
	bad    []string
	hooks  []frontHook
}

type frontHook struct {
	match func(memCall) bool
	run   func()
}

func newServerFront(t *testing.T, target, key string, forbidden ...string) *serverFront {
	t.Helper()
	f := &serverFront{t: t, target: target, key: key, forbidden: forbidden,
		client: &http.Client{Transport: &http.Transport{Proxy: nil}}}
	s := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(s.Close)
	f.url = s.URL
	return f
}

func (f *serverFront) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.checkRequest(r, body)
	out, err := http.NewRequestWithContext(r.Context(), r.Method, f.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	out.Header.Del("Accept-Encoding") // readable bodies for the record
	res, err := f.client.Do(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	resp, _ := io.ReadAll(res.Body)
	res.Body.Close()
	c := memCall{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Body: string(body), Status: res.StatusCode}
	var answer struct {
		ID    string `json:"id"`
		Path  string `json:"path"`
		Error struct {
			ConflictingMemoryID string `json:"conflicting_memory_id"`
		} `json:"error"`
	}
	if json.Unmarshal(resp, &answer) == nil {
		c.RespID, c.RespPath, c.ConflictID = answer.ID, answer.Path, answer.Error.ConflictingMemoryID
	}
	f.mu.Lock()
	f.raw = append(f.raw, c)
	var run []func()
	f.hooks = slices.DeleteFunc(f.hooks, func(h frontHook) bool {
		if h.match(classify(c, f.stores)) {
			run = append(run, h.run)
			return true
		}
		return false
	})
	f.mu.Unlock()
	// Another client acts after the server answered and before this
	// client hears the answer.
	for _, fn := range run {
		fn()
	}
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	w.Write(resp) //nolint:errcheck
}

// checkRequest notes a request that carries anything but the teammem key.
func (f *serverFront) checkRequest(r *http.Request, body []byte) {
	var bad []string
	if got := r.Header.Get("Authorization"); got != "Bearer "+f.key {
		bad = append(bad, fmt.Sprintf("%s %s: Authorization is not the teammem key (%d bytes)", r.Method, r.URL.Path, len(got)))
	}
	if r.Header.Get("X-Api-Key") != "" {
		bad = append(bad, fmt.Sprintf("%s %s: an X-Api-Key header", r.Method, r.URL.Path))
	}
	var all strings.Builder
	for k, vs := range r.Header {
		all.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
	}
	all.WriteString(r.URL.String() + "\n")
	all.Write(body)
	for _, s := range f.forbidden {
		if strings.Contains(all.String(), s) {
			bad = append(bad, fmt.Sprintf("%s %s: carries a Claude credential (%.12s…)", r.Method, r.URL.Path, s))
		}
	}
	if len(bad) > 0 {
		f.mu.Lock()
		f.bad = append(f.bad, bad...)
		f.mu.Unlock()
	}
}

// selfCheck shows the front notices a Claude credential: one request with
// the session token must be noted (and is then forgotten).
func (f *serverFront) selfCheck() {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.url+"/v1/me", nil)
	req.Header.Set("Authorization", "Bearer "+f.forbidden[1])
	if res, err := f.client.Do(req); err == nil {
		res.Body.Close()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bad) != 2 { // not the teammem key; a Claude credential
		f.t.Fatalf("the front missed a Claude credential: %v", f.bad)
	}
	f.bad, f.raw = nil, nil
}

func (f *serverFront) checkCredentials() {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bad) > 0 {
		f.t.Fatalf("the teammem server saw credentials other than the teammem key:\n%s", strings.Join(f.bad, "\n"))
	}
}

// setStores names the store paths calls are classified by (scope → path).
func (f *serverFront) setStores(stores map[string]string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stores = stores
}

// take forgets the calls so far.
func (f *serverFront) take() []memCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.raw
	f.raw = nil
	return out
}

// memCalls returns the calls since the last take, classified.
func (f *serverFront) memCalls() []memCall {
	raw := f.take()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]memCall, 0, len(raw))
	for _, c := range raw {
		out = append(out, classify(c, f.stores))
	}
	return out
}

// afterOnce runs fn once, after the server answered the first call match
// accepts and before the client hears the answer.
func (f *serverFront) afterOnce(match func(memCall) bool, fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hooks = append(f.hooks, frontHook{match: match, run: fn})
}

// classify names a call by the reference's endpoints (§4.1).
func classify(c memCall, stores map[string]string) memCall {
	for scope, p := range stores {
		rest, ok := strings.CutPrefix(c.Path, p+"/")
		if !ok {
			continue
		}
		c.Store, c.Scope = p, scope
		q, _ := url.ParseQuery(c.Query)
		id, hasID := strings.CutPrefix(rest, "memories/")
		switch {
		case c.Method == http.MethodGet && rest == "memories/export" && c.Query == "":
			c.Kind = "E1"
		case c.Method == http.MethodGet && rest == "memories/export" && c.Query == "view=basic":
			c.Kind = "E2"
		case c.Method == http.MethodGet && rest == "memories" && q.Has("path_prefix"):
			c.Kind = "E3'"
		case c.Method == http.MethodGet && rest == "memories":
			c.Kind = "E3"
		case c.Method == http.MethodGet && hasID:
			c.Kind, c.ID = "E4", id
		case c.Method == http.MethodPost && rest == "memories":
			c.Kind = "E5"
		case c.Method == http.MethodPost && hasID:
			c.Kind, c.ID = "E6", id
		case c.Method == http.MethodDelete && hasID:
			c.Kind, c.ID = "E7", id
		default:
			c.Kind = "E?"
		}
		if c.Method == http.MethodPost {
			var b struct {
				Path         string          `json:"path"`
				Precondition json.RawMessage `json:"precondition"`
			}
			if json.Unmarshal([]byte(c.Body), &b) == nil {
				c.MemPath = b.Path
				if len(b.Precondition) > 0 {
					var buf bytes.Buffer
					if json.Compact(&buf, b.Precondition) == nil {
						c.Pre = buf.String()
					}
				}
			}
		}
		return c
	}
	c.Kind = "teammem"
	return c
}

// fakeMessages is the fake Anthropic API: a minimal SSE answer to every
// Messages call and 404 to everything else (the CLI tolerates 404 on its
// other first-party calls, reference §3).
func fakeMessages(t *testing.T) *fakeModel {
	t.Helper()
	return fakeMessagesFunc(t, nil)
}

// sseEvent is one server-sent event of a streamed Messages answer.
type sseEvent struct{ name, data string }

// fakeMessagesFunc is fakeMessages whose answer to each Messages call
// answer picks from the call's request body (nil: the text "ok").
func fakeMessagesFunc(t *testing.T, answer func(body []byte) []sseEvent) *fakeModel {
	t.Helper()
	m := &fakeModel{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !strings.HasPrefix(r.URL.Path, "/v1/messages") || r.URL.Path == "/v1/messages/count_tokens" {
			http.NotFound(w, r)
			return
		}
		m.wait(r.Context())
		evs := textAnswer("ok")
		if answer != nil {
			evs = answer(body)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range evs {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, ev.data)
		}
	}))
	t.Cleanup(s.Close)
	m.url = s.URL
	return m
}

// textAnswer is a streamed answer of one text block that ends the turn.
func textAnswer(text string) []sseEvent {
	q, _ := json.Marshal(text)
	return answerOf(`{"type":"text","text":""}`, `{"type":"text_delta","text":`+string(q)+`}`, "end_turn")
}

// toolUseAnswer is a streamed answer of one tool_use block: the model
// calls tool name with input (JSON) under id.
func toolUseAnswer(id, name, input string) []sseEvent {
	q, _ := json.Marshal(input)
	return answerOf(`{"type":"tool_use","id":"`+id+`","name":"`+name+`","input":{}}`,
		`{"type":"input_json_delta","partial_json":`+string(q)+`}`, "tool_use")
}

func answerOf(block, delta, stop string) []sseEvent {
	return []sseEvent{
		{"message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}}`},
		{"content_block_start", `{"type":"content_block_start","index":0,"content_block":` + block + `}`},
		{"content_block_delta", `{"type":"content_block_delta","index":0,"delta":` + delta + `}`},
		{"content_block_stop", `{"type":"content_block_stop","index":0}`},
		{"message_delta", `{"type":"message_delta","delta":{"stop_reason":"` + stop + `","stop_sequence":null},"usage":{"output_tokens":1}}`},
		{"message_stop", `{"type":"message_stop"}`},
	}
}

// fakeModel is the fake Messages API. Its answer ends claude's turn and so
// its session: hold keeps a session alive until a sync under test is done,
// however slow the machine (the first turn waits at most 2.5 s for the
// startup pull, then ends the session with the cycle still in flight).
type fakeModel struct {
	url  string
	mu   sync.Mutex
	done func() bool
}

// hold makes the model answer only once done reports true, or after 30 s
// (the test's own checks then say what is missing).
func (m *fakeModel) hold(done func() bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done = done
}

func (m *fakeModel) wait(ctx context.Context) {
	m.mu.Lock()
	done := m.done
	m.mu.Unlock()
	if done == nil {
		return
	}
	deadline := time.Now().Add(30 * time.Second)
	for !done() && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
}

// runTimeout runs teammem with extra variables and a deadline: a hung
// claude fails the test instead of the whole package. The deadline kills
// the whole process group (teammem and the claude under it).
func (m *machine) runTimeout(limit time.Duration, extraEnv []string, args ...string) (string, string, int) {
	m.t.Helper()
	cmd := exec.Command(clientBin, args...)
	cmd.Dir = m.repo
	cmd.Env = append(slices.Clone(m.env), extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	timer := time.AfterFunc(limit, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
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

// runBounded runs cmd (a process group of its own) with a deadline that
// kills the group and returns its combined output.
func runBounded(cmd *exec.Cmd, limit time.Duration) (string, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	timer := time.AfterFunc(limit, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	defer timer.Stop()
	err := cmd.Wait()
	return out.String(), err
}

// runQuiet is run for goroutines other than the test's: it reports
// instead of failing.
func (m *machine) runQuiet(args ...string) (string, string, int) {
	cmd := exec.Command(clientBin, args...)
	cmd.Dir = m.repo
	cmd.Env = m.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		return out.String(), err.Error(), -1
	}
	return out.String(), errb.String(), 0
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
