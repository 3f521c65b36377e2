package filelock

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestTryLockContention: a held lock turns a second TryLock away with
// ErrBusy (which is EWOULDBLOCK), and is free again once released.
func TestTryLockContention(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrBusy) || !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("second TryLock: %v, want ErrBusy", err)
	}
	unlock()
	again, err := TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after unlock: %v", err)
	}
	again()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("lock file: %v, %v; want mode 0600", fi, err)
	}
}

// TestLockWaits: Lock waits for the holder to let go, then has the lock.
func TestLockWaits(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func())
	go func() {
		second, err := Lock(path)
		if err != nil {
			t.Error(err)
		}
		got <- second
	}()
	select {
	case <-got:
		t.Fatal("a second Lock did not wait for the first")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	second := <-got
	if _, err := TryLock(path); !errors.Is(err, ErrBusy) {
		t.Fatalf("TryLock while the waiter holds it: %v", err)
	}
	second()
}

// TestLockDir: the directory itself is the lock; a second holder waits.
func TestLockDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	unlock, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		second, err := LockDir(dir)
		if err == nil {
			second()
		}
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("a second LockDir did not wait for the first")
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	<-done
	if _, err := LockDir(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("LockDir of a missing directory succeeded")
	}
}

// TestLockErrorsNameThePath: a lock file that cannot be created is an
// error naming it, not ErrBusy.
func TestLockErrorsNameThePath(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "no", "such", "x.lock")
	for _, take := range []func(string) (func(), error){Lock, TryLock} {
		if _, err := take(path); err == nil || errors.Is(err, ErrBusy) || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("lock in a missing directory: %v", err)
		}
	}
}

// holdEnv makes the test binary a child that holds a lock until killed.
const holdEnv = "FILELOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		if _, err := Lock(path); err != nil {
			os.Exit(2)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestLockDiesWithItsHolder: a holder that is killed (it never unlocks)
// leaves the lock free, and its PID no longer counts as a holder.
func TestLockDiesWithItsHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.lock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "held\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("child: %q, %v", line, err)
	}
	pid := cmd.Process.Pid
	if _, err := TryLock(path); !errors.Is(err, ErrBusy) {
		t.Fatalf("TryLock while the child holds it: %v", err)
	}
	if !Holds(pid, time.Now(), time.Now(), time.Hour) {
		t.Fatal("a live child does not hold its lock")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	unlock, err := TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after the holder died: %v", err)
	}
	unlock()
	if Alive(pid) || Holds(pid, time.Now(), time.Now(), time.Hour) {
		t.Fatalf("dead process %d still counts as a holder", pid)
	}
}

// TestHolds: a lock is held only by a live process other than init, and
// only until it is stale.
func TestHolds(t *testing.T) {
	t.Parallel()
	now := time.Now()
	self := os.Getpid()
	for _, tc := range []struct {
		name  string
		pid   int
		since time.Time
		want  bool
	}{
		{"live and fresh", self, now.Add(-time.Minute), true},
		{"live but stale", self, now.Add(-time.Hour), false},
		{"exactly stale", self, now.Add(-10 * time.Minute), false},
		{"init", 1, now, false},
		{"zero", 0, now, false},
		{"negative", -1, now, false},
	} {
		if got := Holds(tc.pid, tc.since, now, 10*time.Minute); got != tc.want {
			t.Errorf("%s: Holds = %v, want %v", tc.name, got, tc.want)
		}
	}
}
