package main_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWatchSurvivesServerRestart stops the server under a running watch,
// edits a file while it is down, and starts it again on the same address:
// the watcher backs off, reconnects by itself and delivers the edit.
func TestWatchSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	db := "sqlite://" + filepath.Join(t.TempDir(), "t.db")
	start := func() *exec.Cmd {
		cmd := exec.Command(serverBin)
		cmd.Env = append(os.Environ(), "TEAMMEM_ADDR="+addr, "TEAMMEM_METRICS_ADDR=off", "TEAMMEM_DATABASE_URL="+db, "TEAMMEM_BOOTSTRAP_KEY="+serverKey)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 200; i++ {
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		return cmd
	}
	srv := start()
	url := "http://" + addr
	a := newMachine(t, url, "git@github.com:acme/restart.git")
	b := newMachine(t, url, "git@github.com:acme/restart.git")
	A, B := a.memDir(), b.memDir()
	watch := exec.Command(clientBin, "watch", "--debounce", "200ms", "--poll", "1s")
	watch.Dir, watch.Env = a.repo, a.env
	logs := &syncBuffer{}
	watch.Stderr = logs
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Process.Signal(os.Interrupt); _ = watch.Wait() }()
	waitLog(t, logs, "live updates connected")

	_ = srv.Process.Signal(os.Interrupt)
	_ = srv.Wait()
	waitLog(t, logs, "live updates lost")
	a.write(A, "team/while-down.md", "written while the server was down\n")
	waitLog(t, logs, "retrying in")
	time.Sleep(2 * time.Second) // a few backoff rounds, no busy loop
	if n := strings.Count(logs.String(), "retrying in"); n > 6 {
		t.Fatalf("%d retries in ~2 s: the watcher is spinning\n%s", n, logs.String())
	}
	srv = start()
	defer func() { _ = srv.Process.Signal(os.Interrupt); _ = srv.Wait() }()
	waitLog(t, logs, "1 pushed")
	b.must("pull")
	if got := read(t, B, "team/while-down.md"); got != "written while the server was down\n" {
		t.Fatalf("after the restart b has %q\n%s", got, logs.String())
	}
}
