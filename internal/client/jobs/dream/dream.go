// Package dream consolidates a project's memory directory: a model with
// the agent sandbox reviews what recent sessions and daily logs taught and
// turns it into durable, well-organised memories (Claude Code's
// "auto-dream", reference §6; design §7.2).
//
// A Dreamer first runs the gates, cheapest first, each able to stop it
// with a *Skip: enabled → time since the last consolidation → session scan
// throttle → sessions touched since then → the consolidation lock. The
// lock file .consolidate-lock in the memory directory holds the PID of the
// process consolidating, and its mtime is the time of the last
// consolidation: a completed run leaves it at the time the run fired, a
// failed or interrupted one rolls it back.
package dream

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/client/transcript"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/secretscan"
)

// Reason says which gate stopped a dream. The values are the closed set
// telemetry reports as the reason of teammem_dream_skipped.
type Reason string

// The gates, in the order they are checked.
const (
	ReasonDisabled Reason = "disabled" // TEAMMEM_DREAM or autoDreamEnabled turned dreaming off
	ReasonTime     Reason = "time"     // the last consolidation is too recent
	ReasonThrottle Reason = "throttle" // sessions were scanned less than ScanInterval ago
	ReasonSessions Reason = "sessions" // too few sessions since the last consolidation
	ReasonLock     Reason = "lock"     // another process holds the consolidation lock
)

// Skip is the error Check returns when a gate stops the dream. It is an
// expected outcome, not a failure.
type Skip struct {
	Reason  Reason
	Message string // for people: what the gate saw and what it waits for
}

func (s *Skip) Error() string { return "dream skipped (" + string(s.Reason) + "): " + s.Message }

// Dreamer checks the gates for one memory directory and runs the
// consolidation. The zero values of PID and Now mean the process's.
type Dreamer struct {
	Config Config
	// MemoryDir is the memory directory; it holds the lock.
	MemoryDir string
	// TranscriptDir holds the project's session transcripts.
	TranscriptDir string
	// StateDir keeps the scan throttle between runs; "" keeps none.
	StateDir string
	// SessionID is the current session, never counted by the session gate.
	SessionID string
	// PID is written into the lock; 0 means os.Getpid().
	PID int
	// Now is the clock of the gates; nil means time.Now.
	Now func() time.Time

	// Model runs the consolidation; Run needs it, Check does not.
	Model llm.Model
	// Scanner guards team/ against secrets during the run.
	Scanner *secretscan.Scanner
	// OnTurn, when set, hears each model turn.
	OnTurn func(turn int, text string, toolCalls int)
}

// Plan is what Check found when every gate passed and the lock was taken.
type Plan struct {
	// FiredAt is when the gates passed.
	FiredAt time.Time
	// LastConsolidated is the lock's mtime the time gate saw; zero: never.
	LastConsolidated time.Time
	// PriorMtime is the lock's mtime before Acquire replaced it, the time
	// Rollback restores; zero when there was no lock.
	PriorMtime time.Time
	// Sessions are the sessions touched since LastConsolidated, newest
	// first, without the current one (and only substantive ones when
	// Config.Substantive is set).
	Sessions []transcript.SessionFile
}

// Check runs the gates in order and, when all pass, takes the lock. It
// returns a *Skip naming the gate that stopped it, or another error when
// the lock cannot be written. With Config.Force the time, throttle and
// session gates are skipped; the enabled gate and the lock never are.
func (d *Dreamer) Check() (Plan, error) {
	c, now := d.Config, d.now()
	if !c.Enabled {
		return Plan{}, &Skip{ReasonDisabled, "dreaming is turned off by " + first(c.DisabledBy, "the configuration")}
	}
	plan := Plan{FiredAt: now, LastConsolidated: LastConsolidated(d.MemoryDir)}
	hours := float64(now.UnixMilli()-plan.LastConsolidated.UnixMilli()) / float64(time.Hour/time.Millisecond)
	if plan.LastConsolidated.IsZero() {
		hours = float64(now.UnixMilli()) / float64(time.Hour/time.Millisecond) // the reference's lastAt = 0
	}
	if !c.Force {
		if hours < c.MinHours {
			return Plan{}, &Skip{ReasonTime, fmt.Sprintf("the last consolidation was %.1f h ago; the next waits for %g h", hours, c.MinHours)}
		}
		if ok, since := throttled(d.StateDir, now); ok {
			return Plan{}, &Skip{ReasonThrottle, fmt.Sprintf("sessions were scanned %s ago; the next scan waits for %s",
				since.Round(time.Second), ScanInterval)}
		}
		recordScan(d.StateDir, now)
	}
	sessions, err := d.sessionsSince(plan.LastConsolidated)
	if err != nil && !c.Force {
		return Plan{}, &Skip{ReasonSessions, fmt.Sprintf("cannot list sessions: %v", err)}
	}
	plan.Sessions = sessions
	if !c.Force && len(sessions) < c.MinSessions {
		kind := "sessions"
		if c.Substantive {
			kind = "sessions with edits"
		}
		return Plan{}, &Skip{ReasonSessions, fmt.Sprintf("%d %s since the last consolidation; %d needed", len(sessions), kind, c.MinSessions)}
	}
	prior, ok, err := Acquire(d.MemoryDir, d.pid())
	if err != nil {
		return Plan{}, err
	}
	if !ok {
		return Plan{}, &Skip{ReasonLock, "another consolidation holds " + LockPath(d.MemoryDir) + holderNote(d.MemoryDir)}
	}
	plan.PriorMtime = prior
	return plan, nil
}

// sessionsSince lists the sessions modified after last (compared in
// milliseconds, strictly), newest first, leaving out the current session
// and, with Config.Substantive, sessions without edits. A missing
// transcript directory has no sessions.
func (d *Dreamer) sessionsSince(last time.Time) ([]transcript.SessionFile, error) {
	all, err := transcript.ListSessions(d.TranscriptDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []transcript.SessionFile
	for _, s := range all {
		switch {
		case d.SessionID != "" && strings.EqualFold(s.ID, d.SessionID):
		case msTime(s.ModTime).UnixMilli() <= last.UnixMilli() && !last.IsZero():
		case d.Config.Substantive && !substantive(s.Path):
		default:
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ModTime.After(out[j].ModTime) })
	return out, nil
}

// substantive reports whether a session's tool statistics show edits:
// lines added or removed by edit tools. An unreadable transcript is not.
func substantive(path string) bool {
	sum, err := transcript.Summarize(path)
	return err == nil && sum.Tools.LinesAdded+sum.Tools.LinesRemoved > 0
}

// holderNote names the lock's holder for the lock skip message.
func holderNote(dir string) string {
	b, err := os.ReadFile(LockPath(dir))
	if err != nil {
		return ""
	}
	if pid, ok := parsePID(string(b)); ok {
		return fmt.Sprintf(" (process %d)", pid)
	}
	return ""
}

func (d *Dreamer) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Dreamer) pid() int {
	if d.PID != 0 {
		return d.PID
	}
	return os.Getpid()
}

func first(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
