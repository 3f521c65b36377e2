package dream

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// startSleeper starts a process that stays alive until the test ends and
// returns its pid.
func startSleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Skipf("cannot start sleep: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// deadPID returns the pid of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

// writeLock writes a lock file with body and mtime.
func writeLock(t *testing.T, dir, body string, mtime time.Time) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := LockPath(dir)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func readLock(t *testing.T, dir string) (string, time.Time) {
	t.Helper()
	b, err := os.ReadFile(LockPath(dir))
	if err != nil {
		t.Fatalf("read lock: %v", err)
	}
	fi, err := os.Stat(LockPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	return string(b), fi.ModTime()
}

func TestDreamAcquire(t *testing.T) {
	t.Parallel()
	me := os.Getpid()
	recent := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	old := time.Now().Add(-2 * time.Hour).Truncate(time.Millisecond)
	cases := []struct {
		name   string
		body   string // "" with mtime zero: no lock file
		mtime  time.Time
		wantOK bool
	}{
		{"fresh directory", "", time.Time{}, true},
		{"live holder", strconv.Itoa(startSleeper(t)), recent, false},
		{"live holder is this process", strconv.Itoa(me), recent, false},
		{"live holder with whitespace and trailing text", " " + strconv.Itoa(startSleeper(t)) + "x\n", recent, false},
		{"stale after an hour though alive", strconv.Itoa(startSleeper(t)), old, true},
		{"dead holder", strconv.Itoa(deadPID(t)), recent, true},
		{"unparsable body", "not a pid", recent, true},
		{"empty body after a rollback", "", recent, true},
		{"pid 1 counts as dead", "1", recent, true},
		{"negative pid counts as dead", "-4", recent, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "memory")
			if !tc.mtime.IsZero() {
				writeLock(t, dir, tc.body, tc.mtime)
			}
			// LockHolder, which status shows, names the holder Acquire
			// honours.
			if pid, held := LockHolder(dir); held == tc.wantOK || held && pid <= 1 {
				t.Fatalf("LockHolder = %d, %v before an acquire that wants ok %v", pid, held, tc.wantOK)
			}
			prior, ok, err := Acquire(dir, me)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tc.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tc.wantOK)
			}
			if !prior.Equal(tc.mtime) {
				t.Errorf("prior = %v, want %v", prior, tc.mtime)
			}
			body, mtime := readLock(t, dir)
			switch {
			case ok && body != strconv.Itoa(me):
				t.Errorf("body after acquire = %q, want our pid", body)
			case ok && time.Since(mtime) > time.Minute:
				t.Errorf("mtime after acquire = %v, want now", mtime)
			case !ok && (body != tc.body || !mtime.Equal(tc.mtime)):
				t.Errorf("a blocked acquire changed the lock: %q %v", body, mtime)
			}
		})
	}
}

func TestDreamAcquireOneWinner(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "memory")
	writeLock(t, dir, strconv.Itoa(deadPID(t)), time.Now().Add(-time.Minute))
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := Acquire(dir, os.Getpid())
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d acquirers won, want exactly 1", wins)
	}
}

func TestDreamRollback(t *testing.T) {
	t.Parallel()
	t.Run("to the prior mtime", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		prior := time.Now().Add(-50 * time.Hour).Truncate(time.Millisecond)
		writeLock(t, dir, strconv.Itoa(deadPID(t)), prior)
		got, ok, err := Acquire(dir, os.Getpid())
		if err != nil || !ok || !got.Equal(prior) {
			t.Fatalf("acquire = %v %v %v", got, ok, err)
		}
		if err := Rollback(dir, got); err != nil {
			t.Fatal(err)
		}
		body, mtime := readLock(t, dir)
		if body != "" || !mtime.Equal(prior) {
			t.Fatalf("after rollback body %q mtime %v, want empty and %v", body, mtime, prior)
		}
		if last := LastConsolidated(dir); !last.Equal(prior) {
			t.Fatalf("LastConsolidated = %v, want %v", last, prior)
		}
		// The emptied body no longer blocks anyone.
		if _, ok, _ := Acquire(dir, os.Getpid()); !ok {
			t.Fatal("lock still blocks after rollback")
		}
	})
	t.Run("prior zero deletes", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		prior, ok, err := Acquire(dir, os.Getpid())
		if err != nil || !ok || !prior.IsZero() {
			t.Fatalf("acquire = %v %v %v", prior, ok, err)
		}
		if err := Rollback(dir, prior); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(LockPath(dir)); !os.IsNotExist(err) {
			t.Fatalf("lock still there: %v", err)
		}
		if err := Rollback(dir, prior); err != nil {
			t.Fatalf("second rollback: %v", err)
		}
	})
}

func TestDreamAcquireRefusesSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.Symlink(target, LockPath(dir)); err != nil {
		t.Skipf("cannot create a symlink here: %v", err)
	}
	if _, _, err := Acquire(dir, os.Getpid()); err == nil {
		t.Fatal("acquire through a symlink succeeded")
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("the symlink's target was written")
	}
}

func TestDreamParsePID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body   string
		pid    int64
		parsed bool
	}{
		{"123", 123, true},
		{" 42\n", 42, true},
		{"\uFEFF7\u00a0", 7, true},
		{"12abc", 12, true},
		{"+9", 9, true},
		{"-5", -5, true},
		{"99999999999999999999", -1, true},
		{"abc", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"0x10", 0, true},
	}
	for _, tc := range cases {
		pid, parsed := parsePID(tc.body)
		if pid != tc.pid || parsed != tc.parsed {
			t.Errorf("parsePID(%q) = %d, %v; want %d, %v", tc.body, pid, parsed, tc.pid, tc.parsed)
		}
	}
}
