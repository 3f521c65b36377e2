package dream_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/jobs/dream"
)

// bundle is one memory directory with its transcripts and client state,
// and a fake clock two days ahead of the real one (the lock's mtime comes
// from the filesystem, so the fake clock must move forward from it).
type bundle struct {
	t                       *testing.T
	mem, transcripts, state string
	now                     time.Time
}

func setup(t *testing.T) *bundle {
	t.Helper()
	base := t.TempDir()
	b := &bundle{t: t, mem: filepath.Join(base, "memory"), transcripts: filepath.Join(base, "projects", "-repo"),
		state: filepath.Join(base, "state"), now: time.Now().Add(48 * time.Hour).Truncate(time.Millisecond)}
	for _, d := range []string{b.mem, b.transcripts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func sessionID(i int) string { return fmt.Sprintf("%08d-aaaa-4bbb-8ccc-%012d", i, i) }

// editLine is a transcript record of an Edit tool call changing two lines.
const editLine = `{"type":"assistant","uuid":"u1","message":{"id":"m1","role":"assistant","content":[` +
	`{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"/r/a.go","old_string":"a","new_string":"b\nc"}}]}}`

// readLine is a transcript record of a Read tool call.
const readLine = `{"type":"assistant","uuid":"u2","message":{"id":"m2","role":"assistant","content":[` +
	`{"type":"tool_use","id":"t2","name":"Read","input":{"file_path":"/r/a.go"}}]}}`

// sessions writes n sessions numbered from first, modified at mtime, each
// holding line.
func (b *bundle) sessions(first, n int, mtime time.Time, line string) {
	b.t.Helper()
	for i := first; i < first+n; i++ {
		p := filepath.Join(b.transcripts, sessionID(i)+".jsonl")
		if err := os.WriteFile(p, []byte(line+"\n"), 0o644); err != nil {
			b.t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			b.t.Fatal(err)
		}
	}
}

func (b *bundle) lock(body string, mtime time.Time) {
	b.t.Helper()
	p := dream.LockPath(b.mem)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		b.t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		b.t.Fatal(err)
	}
}

func (b *bundle) dreamer(cfg dream.Config) *dream.Dreamer {
	return &dream.Dreamer{Config: cfg, MemoryDir: b.mem, TranscriptDir: b.transcripts, StateDir: b.state,
		Now: func() time.Time { return b.now }}
}

// reason returns the skip reason of err, "" for none; other errors fail.
func reason(t *testing.T, err error) dream.Reason {
	t.Helper()
	var skip *dream.Skip
	switch {
	case err == nil:
		return ""
	case errors.As(err, &skip):
		return skip.Reason
	}
	t.Fatalf("check: %v", err)
	return ""
}

func TestDreamGates(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		cfg     func(*dream.Config)
		prepare func(b *bundle)
		current string // the current session id
		want    dream.Reason
		// wantSessions is the session count of a passing check.
		wantSessions int
	}{
		{name: "disabled", cfg: func(c *dream.Config) { c.Enabled, c.DisabledBy = false, "TEAMMEM_DREAM=0" },
			prepare: func(b *bundle) { b.sessions(0, 6, b.now.Add(-time.Hour), readLine) }, want: dream.ReasonDisabled},
		{name: "disabled even when forced", cfg: func(c *dream.Config) { c.Enabled, c.Force = false, true },
			want: dream.ReasonDisabled},
		{name: "time gate not passed", prepare: func(b *bundle) {
			b.lock("", b.now.Add(-23*time.Hour))
			b.sessions(0, 6, b.now.Add(-time.Hour), readLine)
		}, want: dream.ReasonTime},
		{name: "fractional hours", cfg: func(c *dream.Config) { c.MinHours = 0.5 }, prepare: func(b *bundle) {
			b.lock("", b.now.Add(-40*time.Minute))
			b.sessions(0, 5, b.now.Add(-10*time.Minute), readLine)
		}, wantSessions: 5},
		{name: "sessions below minimum", prepare: func(b *bundle) { b.sessions(0, 4, b.now.Add(-time.Hour), readLine) },
			want: dream.ReasonSessions},
		{name: "no transcript directory", prepare: func(b *bundle) { os.RemoveAll(b.transcripts) }, want: dream.ReasonSessions},
		{name: "sessions older than the last consolidation do not count", prepare: func(b *bundle) {
			b.lock("", b.now.Add(-30*time.Hour))
			b.sessions(0, 3, b.now.Add(-31*time.Hour), readLine)
			b.sessions(3, 4, b.now.Add(-time.Hour), readLine)
		}, want: dream.ReasonSessions},
		{name: "current session excluded", prepare: func(b *bundle) { b.sessions(0, 5, b.now.Add(-time.Hour), readLine) },
			current: sessionID(2), want: dream.ReasonSessions},
		{name: "current session excluded whatever its case", prepare: func(b *bundle) { b.sessions(0, 5, b.now.Add(-time.Hour), readLine) },
			current: strings.ToUpper(sessionID(2)), want: dream.ReasonSessions},
		{name: "another session is current", prepare: func(b *bundle) { b.sessions(0, 6, b.now.Add(-time.Hour), readLine) },
			current: sessionID(2), wantSessions: 5},
		{name: "substantive only counts sessions with edits", cfg: func(c *dream.Config) { c.Substantive = true },
			prepare: func(b *bundle) {
				b.sessions(0, 2, b.now.Add(-time.Hour), editLine)
				b.sessions(2, 5, b.now.Add(-time.Hour), readLine)
			}, want: dream.ReasonSessions},
		{name: "substantive passes with enough edits", cfg: func(c *dream.Config) { c.Substantive, c.MinSessions = true, 2 },
			prepare: func(b *bundle) {
				b.sessions(0, 2, b.now.Add(-time.Hour), editLine)
				b.sessions(2, 5, b.now.Add(-time.Hour), readLine)
			}, wantSessions: 2},
		{name: "locked by a live holder", prepare: func(b *bundle) {
			b.lock("", b.now.Add(-30*time.Hour))
			b.sessions(0, 5, b.now.Add(-time.Hour), readLine)
			b.lock(strconv.Itoa(os.Getpid()), time.Now()) // mtime now: 48 fake hours ago
		}, want: dream.ReasonLock},
		{name: "force skips the time and session gates", cfg: func(c *dream.Config) { c.Force = true },
			prepare: func(b *bundle) { b.lock("", b.now.Add(-time.Hour)) }, wantSessions: 0},
		{name: "force does not skip the lock", cfg: func(c *dream.Config) { c.Force = true },
			prepare: func(b *bundle) { b.lock(strconv.Itoa(os.Getpid()), time.Now()) }, want: dream.ReasonLock},
		{name: "all gates pass", prepare: func(b *bundle) { b.sessions(0, 5, b.now.Add(-time.Hour), readLine) }, wantSessions: 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if tc.prepare != nil {
				tc.prepare(b)
			}
			cfg := dream.DefaultConfig()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			d := b.dreamer(cfg)
			d.SessionID = tc.current
			priorBody, _ := os.ReadFile(dream.LockPath(b.mem))
			prior := dream.LastConsolidated(b.mem)
			plan, err := d.Check()
			got := reason(t, err)
			if got != tc.want {
				t.Fatalf("reason = %q (%v), want %q", got, err, tc.want)
			}
			body, _ := os.ReadFile(dream.LockPath(b.mem))
			if tc.want != "" {
				if string(body) != string(priorBody) || !dream.LastConsolidated(b.mem).Equal(prior) {
					t.Fatalf("a skipped check changed the lock: %q", body)
				}
				return
			}
			if string(body) != strconv.Itoa(os.Getpid()) {
				t.Fatalf("lock body = %q, want our pid", body)
			}
			if !plan.PriorMtime.Equal(prior) || !plan.LastConsolidated.Equal(prior) {
				t.Fatalf("plan prior %v last %v, want %v", plan.PriorMtime, plan.LastConsolidated, prior)
			}
			if len(plan.Sessions) != tc.wantSessions {
				t.Fatalf("plan has %d sessions, want %d", len(plan.Sessions), tc.wantSessions)
			}
			for _, s := range plan.Sessions {
				if strings.EqualFold(s.ID, tc.current) {
					t.Fatalf("current session %s listed", s.ID)
				}
			}
		})
	}
}

func TestDreamThrottle(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.sessions(0, 5, b.now.Add(-time.Hour), readLine)
	d := b.dreamer(dream.DefaultConfig())
	plan, err := d.Check()
	if got := reason(t, err); got != "" {
		t.Fatalf("first check skipped: %v", err)
	}
	if err := dream.Rollback(b.mem, plan.PriorMtime); err != nil {
		t.Fatal(err)
	}
	// Five minutes later the sessions still qualify, but the scan is throttled.
	b.now = b.now.Add(5 * time.Minute)
	if _, err := d.Check(); reason(t, err) != dream.ReasonThrottle {
		t.Fatalf("second check = %v, want throttle", err)
	}
	// A new process (a new Dreamer) sees the same persisted throttle.
	if _, err := b.dreamer(dream.DefaultConfig()).Check(); reason(t, err) != dream.ReasonThrottle {
		t.Fatalf("check from a new dreamer = %v, want throttle", err)
	}
	// Forcing skips the throttle.
	forced := dream.DefaultConfig()
	forced.Force = true
	plan, err = b.dreamer(forced).Check()
	if reason(t, err) != "" {
		t.Fatalf("forced check = %v", err)
	}
	if err := dream.Rollback(b.mem, plan.PriorMtime); err != nil {
		t.Fatal(err)
	}
	// Past the interval the scan runs again and the gates pass.
	b.now = b.now.Add(dream.ScanInterval)
	if _, err := d.Check(); reason(t, err) != "" {
		t.Fatalf("check after the interval = %v", err)
	}
}

// A throttled check still needs the time gate first: the throttle is only
// recorded by checks that reached it.
func TestDreamThrottleRecordedOnlyPastTimeGate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.lock("", b.now.Add(-2*time.Hour))
	b.sessions(0, 5, b.now.Add(-time.Hour), readLine)
	d := b.dreamer(dream.DefaultConfig())
	if _, err := d.Check(); reason(t, err) != dream.ReasonTime {
		t.Fatalf("check = %v, want time", err)
	}
	d.Config.MinHours = 1
	if _, err := d.Check(); reason(t, err) != "" {
		t.Fatalf("check = %v, want pass", err)
	}
}

func TestDreamLoadConfig(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	settings := func(body string) {
		if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	c, err := dream.LoadConfig(env(), home)
	if err != nil || c != dream.DefaultConfig() {
		t.Fatalf("defaults = %+v, %v", c, err)
	}
	c, err = dream.LoadConfig(env(dream.EnvEnabled, "false"), home)
	if err != nil || c.Enabled || !strings.Contains(c.DisabledBy, dream.EnvEnabled) {
		t.Fatalf("TEAMMEM_DREAM=false: %+v, %v", c, err)
	}
	c, err = dream.LoadConfig(env(dream.EnvMinHours, "0.25", dream.EnvMinSessions, "2", dream.EnvSubstantive, "1"), home)
	if err != nil || c.MinHours != 0.25 || c.MinSessions != 2 || !c.Substantive {
		t.Fatalf("env overrides: %+v, %v", c, err)
	}
	settings(`{"autoDreamEnabled": false, "other": [1, 2]}`)
	c, err = dream.LoadConfig(env(), home)
	if err != nil || c.Enabled || !strings.Contains(c.DisabledBy, "autoDreamEnabled") {
		t.Fatalf("settings false: %+v, %v", c, err)
	}
	c, _ = dream.LoadConfig(env(dream.EnvEnabled, "1"), home)
	if !c.Enabled {
		t.Fatal("TEAMMEM_DREAM=1 does not override the settings")
	}
	settings(`{not json`)
	if c, _ := dream.LoadConfig(env(), home); !c.Enabled {
		t.Fatal("malformed settings disabled dreaming")
	}
	for _, kv := range [][]string{{dream.EnvEnabled, "maybe"}, {dream.EnvMinHours, "-1"}, {dream.EnvMinHours, "NaN"},
		{dream.EnvMinSessions, "2.5"}, {dream.EnvSubstantive, "sure"}} {
		if _, err := dream.LoadConfig(env(kv...), home); err == nil || !strings.Contains(err.Error(), kv[0]) {
			t.Errorf("%s=%s: error %v does not name the variable", kv[0], kv[1], err)
		}
	}
}
