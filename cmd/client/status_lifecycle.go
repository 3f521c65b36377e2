package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/client/ccsettings"
	"github.com/teammem/teammem/internal/client/jobs/dream"
	"github.com/teammem/teammem/internal/client/jobs/extract"
	"github.com/teammem/teammem/internal/client/jobs/sessionmem"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/client/transcript"
	"github.com/teammem/teammem/internal/llm"
)

// statusJSON is what `status --json` prints: the sync status, then the
// lifecycle section under "lifecycle".
type statusJSON struct {
	statusOutput
	Lifecycle lifecycleStatus `json:"lifecycle"`
}

// lifecycleStatus is the memory-lifecycle section of `teammem status`:
// who runs each part for this project, and where each stands.
type lifecycleStatus struct {
	Mode  memoryModeSetting `json:"memory_mode"`
	Model string            `json:"model"`
	// Hooks lists the events teammem's installed hooks run on, and the
	// flags they carry ("" for none).
	Hooks      []string `json:"hooks"`
	HookFlags  string   `json:"hook_flags,omitempty"`
	Extraction who      `json:"extraction"`
	Notes      who      `json:"session_memory"`
	Dream      who      `json:"dream"`
	// LastExtraction is the most recent extraction run of any session.
	LastExtraction *lastExtraction `json:"last_extraction,omitempty"`
	// HookSkips are the parts the hooks skipped before starting anything.
	HookSkips map[string]hookSkip `json:"hook_skips"`
	Sessions  []sessionNotes      `json:"sessions"`
	Gates     dreamGates          `json:"dream_gates"`
}

// who says who runs one part: "teammem", "Claude Code", "both" or
// "nobody", and why.
type who struct {
	By  string `json:"by"`
	Why string `json:"why"`
}

type lastExtraction struct {
	Session    string    `json:"session"`
	At         time.Time `json:"at"`
	Outcome    string    `json:"outcome"`
	SkipReason string    `json:"skip_reason,omitempty"`
}

// sessionNotes is one recent session's notes file and its last check.
type sessionNotes struct {
	Session    string    `json:"session"`
	Path       string    `json:"path"`
	Bytes      int64     `json:"bytes"`
	Tokens     int       `json:"tokens"`
	Updated    time.Time `json:"updated"`
	Updates    int       `json:"updates"`
	LastCheck  string    `json:"last_check,omitempty"`
	SkipReason string    `json:"skip_reason,omitempty"`
}

// dreamGates are the dream's gates as they stand now.
type dreamGates struct {
	Enabled          bool       `json:"enabled"`
	DisabledBy       string     `json:"disabled_by,omitempty"`
	LastConsolidated *time.Time `json:"last_consolidated"`
	HoursSince       float64    `json:"hours_since"`
	MinHours         float64    `json:"min_hours"`
	SessionsSince    int        `json:"sessions_since"`
	MinSessions      int        `json:"min_sessions"`
	LockHolder       int        `json:"lock_holder,omitempty"`
}

// maxStatusSessions bounds the sessions listed.
const maxStatusSessions = 5

// lifecycleStatus gathers the section for loc's project.
func (a *app) lifecycleStatus(loc memdir.Location) lifecycleStatus {
	s := lifecycleStatus{Mode: a.memoryMode(), Model: "not configured", HookSkips: map[string]hookSkip{}, Sessions: []sessionNotes{}}
	if cfg, err := llm.ConfigFromEnv(a.getenv); err == nil {
		s.Model = cfg.Provider + "/" + cfg.Model
	} else if !errors.Is(err, llm.ErrNotConfigured) {
		s.Model = "misconfigured: " + err.Error()
	}
	s.Hooks, s.HookFlags = installedHookEvents(loc)
	p := a.plan(loc, map[bool]string{true: engineAlways, false: engineAuto}[s.HookFlags == "--engine always"], s.HookFlags == "--sync-only")
	s.Extraction = whoRuns(p.Extract, p.Claude.AutoMemory, slices.Contains(s.Hooks, "Stop"))
	s.Notes = whoRuns(p.Notes, p.Claude.AutoMemory, slices.Contains(s.Hooks, "PostToolUse"))
	s.Dream = whoRuns(p.Dream, p.Claude.Dream, slices.Contains(s.Hooks, "Stop"))
	if p.Dream.Reason == skipLogMode {
		s.Dream = who{By: "teammem", Why: "nightly, once `teammem dream --install-schedule` has scheduled it (long-running mode); the hooks do not dream"}
	}
	if stateDir, err := a.localStateDir(loc); err == nil {
		s.LastExtraction = latestExtraction(stateDir)
		s.HookSkips = loadLifecycle(stateDir).Skips
		s.Sessions = recentNotes(loc, stateDir)
	}
	s.Gates = a.dreamGates(loc)
	return s
}

// whoRuns combines teammem's plan for a part with Claude Code's engine
// and whether the hook that runs the part is installed.
func whoRuns(p partPlan, claudeRuns, hooked bool) who {
	ours := p.Run && hooked
	switch {
	case ours && claudeRuns:
		return who{"both", p.Why}
	case ours:
		return who{"teammem", p.Why}
	case claudeRuns:
		return who{"Claude Code", "its auto memory runs it; teammem's hooks leave it alone"}
	case p.Run:
		return who{"nobody", "teammem's hooks for it are not installed: run `teammem hook install`"}
	}
	return who{"nobody", p.Why}
}

// installedHookEvents finds teammem's hook entries in the project's and
// the user's Claude Code settings: the events, and the flags of the first.
func installedHookEvents(loc memdir.Location) (events []string, flags string) {
	for _, file := range claudeSettingsFiles(loc) {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		var s struct {
			Hooks map[string][]struct {
				Hooks []struct{ Type, Command string }
			}
		}
		if json.Unmarshal(b, &s) != nil {
			continue
		}
		for event, groups := range s.Hooks {
			for _, g := range groups {
				for _, h := range g.Hooks {
					if h.Type == "command" && ccsettings.IsTeammemHook(h.Command, "") {
						if !slices.Contains(events, event) {
							events = append(events, event)
						}
						for _, f := range ccsettings.FlagSuffixes {
							if strings.HasSuffix(strings.TrimSpace(h.Command), f) && flags == "" {
								flags = strings.TrimSpace(f)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(events)
	return events, flags
}

// latestExtraction returns the most recent extraction run.
func latestExtraction(stateDir string) *lastExtraction {
	st, err := extract.LoadState(stateDir)
	if err != nil {
		return nil
	}
	var last *lastExtraction
	for id, s := range st.Sessions {
		if last == nil || s.LastRun.After(last.At) {
			last = &lastExtraction{Session: id, At: s.LastRun, Outcome: s.LastOutcome, SkipReason: s.LastSkipReason}
		}
	}
	return last
}

// recentNotes lists the newest notes files of the project's sessions.
func recentNotes(loc memdir.Location, stateDir string) []sessionNotes {
	states := map[string]sessionmem.State{}
	for _, st := range sessionmem.ListStates(stateDir) {
		states[st.SessionID] = st
	}
	paths, _ := filepath.Glob(filepath.Join(loc.TranscriptDir, "*", "session-memory", sessionmem.NotesFile))
	for _, st := range states { // notes kept under another cwd of the project
		if st.NotesPath != "" && !slices.Contains(paths, st.NotesPath) {
			paths = append(paths, st.NotesPath)
		}
	}
	out := []sessionNotes{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		id := filepath.Base(filepath.Dir(filepath.Dir(p)))
		n := sessionNotes{Session: id, Path: p, Bytes: fi.Size(), Updated: fi.ModTime()}
		if b, err := os.ReadFile(p); err == nil {
			n.Tokens = sessionmem.EstimateTokens(string(b))
		}
		if st, ok := states[id]; ok {
			n.Updates, n.LastCheck, n.SkipReason = st.Updates, st.LastOutcome, st.LastSkipReason
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out[:min(len(out), maxStatusSessions)]
}

// dreamGates reads the dream's gates without moving them.
func (a *app) dreamGates(loc memdir.Location) dreamGates {
	cfg, _ := dream.LoadConfig(a.getenv, loc.ConfigHome)
	g := dreamGates{Enabled: cfg.Enabled, DisabledBy: cfg.DisabledBy, MinHours: cfg.MinHours, MinSessions: cfg.MinSessions}
	last := dream.LastConsolidated(loc.MemoryDir)
	if !last.IsZero() {
		g.LastConsolidated = &last
		g.HoursSince = time.Since(last).Hours()
	}
	sessions, _ := transcript.ListSessions(loc.TranscriptDir)
	for _, s := range sessions {
		if last.IsZero() || s.ModTime.UnixMilli() > last.UnixMilli() {
			g.SessionsSince++
		}
	}
	if pid, ok := dream.LockHolder(loc.MemoryDir); ok {
		g.LockHolder = pid
	}
	return g
}

// printLifecycle prints the section for people.
func printLifecycle(w io.Writer, s lifecycleStatus) {
	fmt.Fprintf(w, "\nmemory lifecycle (mode %s, from %s)\n", s.Mode.Mode, s.Mode.Source)
	fmt.Fprintf(w, "  model          %s\n", s.Model)
	hooks := "none installed"
	if len(s.Hooks) > 0 {
		hooks = strings.TrimSpace(strings.Join(s.Hooks, ", ") + " " + s.HookFlags)
	}
	fmt.Fprintf(w, "  hooks          %s\n", hooks)
	fmt.Fprintf(w, "  extraction     %s: %s\n", s.Extraction.By, s.Extraction.Why)
	if e := s.LastExtraction; e != nil {
		fmt.Fprintf(w, "                 last run %s, session %s: %s%s\n", ago(e.At), e.Session, e.Outcome, paren(e.SkipReason))
	}
	printHookSkip(w, s.HookSkips[partExtract])
	fmt.Fprintf(w, "  session notes  %s: %s\n", s.Notes.By, s.Notes.Why)
	printHookSkip(w, s.HookSkips[partNotes])
	for _, n := range s.Sessions {
		fmt.Fprintf(w, "                 %s  %d bytes, ~%d tokens, updated %s (%d updates)%s\n", n.Session, n.Bytes, n.Tokens, ago(n.Updated), n.Updates,
			map[bool]string{true: "; last check: " + n.SkipReason, false: ""}[n.SkipReason != ""])
	}
	fmt.Fprintf(w, "  dream          %s: %s\n", s.Dream.By, s.Dream.Why)
	printHookSkip(w, s.HookSkips[partDream])
	g := s.Gates
	switch {
	case !g.Enabled:
		fmt.Fprintf(w, "                 turned off by %s\n", g.DisabledBy)
	case g.LastConsolidated == nil:
		fmt.Fprintf(w, "                 never consolidated; %d sessions (needs %d)\n", g.SessionsSince, g.MinSessions)
	default:
		fmt.Fprintf(w, "                 last consolidation %.1f h ago (needs %g h); %d sessions since (needs %d)\n", g.HoursSince, g.MinHours, g.SessionsSince, g.MinSessions)
	}
	if g.LockHolder != 0 {
		fmt.Fprintf(w, "                 consolidating now: process %d holds the lock\n", g.LockHolder)
	}
}

// printHookSkip prints a part's run of hook-level skips, if any.
func printHookSkip(w io.Writer, s hookSkip) {
	if s.Reason == "" || expectedSkips[s.Reason] {
		return
	}
	fmt.Fprintf(w, "                 hooks skipped it %d times since %s (%s)\n", s.Count, s.Since.Local().Format("2006-01-02 15:04"), s.Reason)
}

// ago formats t with how long ago it was.
func ago(t time.Time) string {
	return t.Local().Format("2006-01-02 15:04:05") + " (" + time.Since(t).Round(time.Second).String() + " ago)"
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
