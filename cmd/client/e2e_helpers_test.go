package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/teammem/teammem/internal/testing/e2etest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Binaries built once for the package.
var clientBin, serverBin string

// binDirEnv names the directory of already built binaries for a re-run.
const binDirEnv = "TEAMMEM_TEST_BIN_DIR"

func TestMain(m *testing.M) {
	// A test re-run of this binary (TestRealClaudeCode in its network
	// namespace) uses the parent's binaries instead of building them again.
	if dir := os.Getenv(binDirEnv); dir != "" {
		clientBin, serverBin = filepath.Join(dir, "teammem"), filepath.Join(dir, "teammem-server")
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "teammem-client-e2e")
	if err != nil {
		panic(err)
	}
	clientBin, serverBin = filepath.Join(dir, "teammem"), filepath.Join(dir, "teammem-server")
	for bin, pkg := range map[string]string{clientBin: ".", serverBin: "../server"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const serverKey = "client-e2e-key-0123456789abcdefghijkl"

type syncBuffer = e2etest.SyncBuffer

// startServer runs teammem-server on SQLite on a random port and returns its URL.
func startServer(t *testing.T, env ...string) string {
	t.Helper()
	return startServerDB(t, filepath.Join(t.TempDir(), "t.db"), env...)
}

// startServerDB is startServer on the SQLite file db, which the test may
// open too (to move a dream along as a worker would).
func startServerDB(t *testing.T, db string, env ...string) string {
	t.Helper()
	url, cmd, _ := e2etest.StartServer(t, serverBin, append([]string{"TEAMMEM_ADDR=127.0.0.1:0",
		"TEAMMEM_DATABASE_URL=sqlite://" + db,
		"TEAMMEM_BOOTSTRAP_KEY=" + serverKey, "TEAMMEM_WRITE_RATE=0", "TEAMMEM_READ_RATE=0"}, env...)...)
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	return url
}

// machine is one simulated developer machine: its own home, Claude config
// home and clone of the repository.
type machine struct {
	t      *testing.T
	home   string
	repo   string
	server string
	env    []string
}

func newMachine(t *testing.T, server, remote string) *machine {
	t.Helper()
	home := t.TempDir()
	m := &machine{t: t, home: home, repo: filepath.Join(home, "src", "widgets"), server: server}
	if err := os.MkdirAll(m.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", remote}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = m.repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	m.env = append(os.Environ(), "HOME="+home, "CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "TEAMMEM_SERVER="+server, "TEAMMEM_API_KEY="+serverKey)
	return m
}

// run runs teammem in the machine's clone and returns stdout, stderr and
// the exit code.
func (m *machine) run(args ...string) (string, string, int) {
	m.t.Helper()
	cmd := exec.Command(clientBin, args...)
	cmd.Dir = m.repo
	cmd.Env = m.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		m.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// must runs teammem and fails the test on a non-zero exit.
func (m *machine) must(args ...string) string {
	m.t.Helper()
	out, errOut, code := m.run(args...)
	if code != 0 {
		m.t.Fatalf("teammem %v exited %d:\n%s%s", args, code, out, errOut)
	}
	return out
}

// memDir is where Claude Code keeps this clone's memory. status prints it
// also when no server answers (and then exits 4).
func (m *machine) memDir() string {
	m.t.Helper()
	var st struct {
		MemoryDir string `json:"memory_dir"`
	}
	out, errOut, code := m.run("status", "--json")
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.MemoryDir == "" || (code != 0 && code != 4) {
		m.t.Fatalf("status --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	return st.MemoryDir
}

func (m *machine) write(dir, key, content string) {
	m.t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		m.t.Fatal(err)
	}
}

func read(t *testing.T, dir, key string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(key)))
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

// waitFile waits until key holds want, returning how long it took.
func waitFile(t *testing.T, dir, key, want string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < limit {
		if read(t, dir, key) == want {
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never became %q (is %q)", key, want, read(t, dir, key))
	return 0
}

func contains(t *testing.T, s, want string) {
	t.Helper()
	if !strings.Contains(s, want) {
		t.Fatalf("output lacks %q:\n%s", want, s)
	}
}

// status runs `teammem status` with args and returns its stdout; exit 4
// (no server answered) is fine for tests of the local half.
func (m *machine) status(args ...string) string {
	m.t.Helper()
	out, errOut, code := m.run(append([]string{"status"}, args...)...)
	if code != 0 && code != 4 {
		m.t.Fatalf("teammem status %v exited %d:\n%s%s", args, code, out, errOut)
	}
	return out
}
