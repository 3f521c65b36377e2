package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// benchKey is the owner key of org "default" on every server the bench
// starts (TEAMMEM_BOOTSTRAP_KEY).
const benchKey = "tmk_benchkey_0123456789abcdefghijklmnopqrstuv"

// benchAdminKey is the server operators' key (TEAMMEM_ADMIN_KEY) of every
// server the bench starts: the cross-org workload creates its orgs with it.
const benchAdminKey = "tmk_benchadmin_0123456789abcdefghijklmnopqrst"

// benchMetricsToken lets recordPool read /metrics on the API listener; the
// servers open no metrics listener of their own, so that several can run.
const benchMetricsToken = "bench-metrics-token-0123456789abcdefghij"

// server is a teammem server under test: a child process, or an in-process
// one when profiling.
type server interface {
	// addr returns the host:port the API listens on.
	addr() string
	// rssMB returns the server's resident set size (0 when unknown).
	rssMB() float64
	// cpuSeconds returns the CPU time the server has used so far (user +
	// system; 0 when unknown).
	cpuSeconds() float64
	// profile starts a CPU profile named name; the returned func stops it.
	profile(name string) func()
	// stop shuts the server down.
	stop() error
}

// procServer is teammem-server running as a child process.
type procServer struct {
	cmd      *exec.Cmd
	hostport string
	startup  time.Duration // exec to the first /healthz 200: listening
	ready    time.Duration // exec to the first /readyz 200: secret rules compiled too
	logs     *tail
	done     chan error
}

// serverEnv is the configuration every server under test gets: rate
// limiting off (the bench hammers one key), request logs off, /metrics on
// the API listener only, the admin plane open to benchAdminKey, then extra
// (--server-env), which may override any of it.
func serverEnv(addr, dsn string, extra []string) []string {
	env := append(os.Environ(), "TEAMMEM_ADDR="+addr, "TEAMMEM_DATABASE_URL="+dsn, "TEAMMEM_BOOTSTRAP_KEY="+benchKey,
		"TEAMMEM_WRITE_RATE=0", "TEAMMEM_READ_RATE=0", "TEAMMEM_LOG_LEVEL=warn", "TEAMMEM_LOG_FORMAT=json",
		"TEAMMEM_METRICS_ADDR=off", "TEAMMEM_METRICS_TOKEN="+benchMetricsToken)
	env = append(env, "TEAMMEM_ADMIN_KEY="+benchAdminKey)
	return append(env, extra...)
}

// startProc starts bin on dsn and waits until /healthz, then /readyz, answer. With the log
// level at warn the server does not log its address, so the bench picks a
// free port itself. startup is the time from exec to the first 200.
func startProc(ctx context.Context, bin, dsn string, extraEnv []string) (*procServer, error) {
	hostport, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &procServer{hostport: hostport, logs: &tail{max: 40}, done: make(chan error, 1)}
	s.cmd = exec.Command(bin)
	s.cmd.Env = serverEnv(hostport, dsn, extraEnv)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	start := time.Now()
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.done <- s.cmd.Wait() }()
	if err := waitOK(ctx, hostport, "/healthz", s.done, 60*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s did not start: %w\n%s", bin, err, s.logs)
	}
	s.startup = time.Since(start)
	if err := waitOK(ctx, hostport, "/readyz", s.done, 60*time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s never got ready: %w\n%s", bin, err, s.logs)
	}
	s.ready = time.Since(start)
	return s, nil
}

// waitOK polls path until it answers 200, the process exits or limit
// passes.
func waitOK(ctx context.Context, hostport, path string, exited <-chan error, limit time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("exited: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		if resp, err := client.Get("http://" + hostport + path); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return errors.New("timed out")
}

// freePort returns a 127.0.0.1 address no one listens on right now.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (s *procServer) addr() string { return s.hostport }

func (s *procServer) rssMB() float64 { return procRSSMB(s.cmd.Process.Pid) }

func (s *procServer) cpuSeconds() float64 { return procCPUSeconds(s.cmd.Process.Pid) }

func (s *procServer) profile(string) func() { return func() {} }

// stop interrupts the server (a graceful shutdown) and kills it after 15 s.
func (s *procServer) stop() error {
	if s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		return errors.New("server ignored SIGINT for 15 s; killed")
	}
	return nil
}

// procRSSMB reads VmRSS of a process from /proc, in MB (0 when unknown).
func procRSSMB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err == nil {
				return float64(kb) / 1024
			}
		}
	}
	return 0
}

// procCPUSeconds reads utime + stime of a process from /proc/<pid>/stat.
func procCPUSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields after its ")" are fixed.
	_, rest, ok := strings.Cut(string(data), ") ")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on Linux.
const clockTicks = 100

// tail keeps the last max lines written to it, for error messages.
type tail struct {
	mu    sync.Mutex
	max   int
	lines []string
	at    []time.Time // when each line arrived, for the propagation stages
	part  string
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	sc := bufio.NewScanner(strings.NewReader(t.part + string(p)))
	t.part = ""
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(p) > 0 && p[len(p)-1] != '\n' && len(lines) > 0 {
		t.part, lines = lines[len(lines)-1], lines[:len(lines)-1]
	}
	now := time.Now()
	t.lines = append(t.lines, lines...)
	for range lines {
		t.at = append(t.at, now)
	}
	if over := len(t.lines) - t.max; over > 0 {
		t.lines, t.at = t.lines[over:], t.at[over:]
	}
	return len(p), nil
}

// firstAfter returns when the first line containing substr that arrived
// after since arrived.
func (t *tail) firstAfter(substr string, since time.Time) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, l := range t.lines {
		if t.at[i].After(since) && strings.Contains(l, substr) {
			return t.at[i], true
		}
	}
	return time.Time{}, false
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

var _ io.Writer = (*tail)(nil)
