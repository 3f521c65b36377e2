package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/filelock"
	memsync "github.com/teammem/teammem/internal/client/memsync"
)

// hookInput is the part of Claude Code's hook input that teammem reads;
// every other field is ignored.
type hookInput struct {
	Event          string `json:"hook_event_name"`
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	// Source is SessionStart's "startup", "resume", "clear" or "compact";
	// Trigger is PreCompact's "manual" or "auto".
	Source  string `json:"source"`
	Trigger string `json:"trigger"`
}

// Hook limits. Claude Code waits for a hook (up to the entry's timeout) before
// it goes on, so the foreground work is bounded well below that.
const (
	hookPullTimeout = 5 * time.Second  // SessionStart
	hookPushTimeout = 10 * time.Second // SessionEnd
	// hookGrace is how long a timed-out sync gets to record its state.
	hookGrace = time.Second
	// maxHookInput bounds what is read from stdin.
	maxHookInput = 1 << 20
)

// bgStopFlags are the hidden flags of the detached Stop worker.
type bgStopFlags struct {
	on         bool
	session    string
	transcript string
	noExtract  bool
	noDream    bool
}

// hookCmd is `teammem hook`, plus install and uninstall. The hidden
// --background-stop mode is the detached worker a Stop event starts.
func (a *app) hookCmd() *cobra.Command {
	var bg bgStopFlags
	var hf hookFlags
	cmd := &cobra.Command{
		Use:   "hook",
		Short: "Run as a Claude Code hook: pull at SessionStart, extract at Stop, push at SessionEnd",
		Long: "hook is what Claude Code runs (see `teammem hook install`). It reads the hook's JSON on\n" +
			"stdin and works in the session's project ($CLAUDE_PROJECT_DIR, else the input's cwd):\n" +
			"  SessionStart  pulls both scopes, giving up after 5 s; after a compaction (source compact)\n" +
			"                it also hands the session its notes (see `teammem session-memory`)\n" +
			"  Stop          starts `teammem extract` then `teammem dream` in a detached background\n" +
			"                process and returns at once; starts a notes update when one is due\n" +
			"  PostToolUse   starts a notes update when one is due\n" +
			"  PreCompact    brings the notes up to date, waiting for that up to 15 s\n" +
			"  SessionEnd    pushes both scopes, giving up after 10 s\n" +
			"Other events are ignored. TEAMMEM_HOOK_TIMEOUT (e.g. 3s, or seconds) replaces these limits.\n\n" +
			"With --engine auto (the default) the hooks leave to Claude Code what it runs itself: with its\n" +
			"auto memory on, its own extraction and session memory, and unless autoDreamEnabled is false, its\n" +
			"dream; --engine always runs everything, --sync-only only the syncs. Without a model the engine's\n" +
			"parts are skipped (no_model), logged once a day and counted in `teammem status`.\n\n" +
			"A hook must never get in the agent's way: it always exits 0 and prints nothing but the notes\n" +
			"after a compaction. Outcomes\n" +
			"and failures go to hook.log in teammem's local state dir (capped at about 1 MB;\n" +
			"`teammem status` shows the sync side).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if bg.on {
				a.runBackgroundStop(cmd.Context(), bg)
				return nil
			}
			if hf.engine != engineAuto && hf.engine != engineAlways {
				hf.engine = engineAuto // a hook never fails on its flags
			}
			a.runHook(cmd.Context(), hf)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&bg.on, "background-stop", false, "run the Stop work (extract, then dream) in this process")
	f.StringVar(&bg.session, "session", "", "session id, with --background-stop")
	f.StringVar(&bg.transcript, "transcript", "", "transcript path, with --background-stop")
	f.BoolVar(&bg.noExtract, "no-extract", false, "with --background-stop, skip the extraction")
	f.BoolVar(&bg.noDream, "no-dream", false, "with --background-stop, skip the dream")
	f.StringVar(&hf.engine, "engine", engineAuto, "auto: run only the parts Claude Code does not run itself; always: run every part")
	f.BoolVar(&hf.syncOnly, "sync-only", false, "only pull and push: no extraction, notes or dream")
	for _, name := range []string{"background-stop", "session", "transcript", "no-extract", "no-dream"} {
		_ = f.MarkHidden(name) // internal: the hook re-executes itself with them
	}
	cmd.AddCommand(a.hookInstallCmd(), a.hookUninstallCmd())
	return cmd
}

// runHook handles one hook event. It never fails: problems are logged.
//
// It works in --cwd if given, else in $CLAUDE_PROJECT_DIR, which Claude
// Code sets for hooks to the directory the session started in (the one its
// memory is keyed by, whatever the agent cd'ed into since), else in the
// input's cwd.
func (a *app) runHook(ctx context.Context, hf hookFlags) {
	in, inErr := a.readHookInput()
	if a.cwd == "" {
		a.cwd = first(a.getenv("CLAUDE_PROJECT_DIR"), in.Cwd)
	}
	log := a.openHookLog(in.Event)
	defer func() {
		if r := recover(); r != nil {
			log.printf("internal error: %v", r)
		}
	}()
	if inErr != nil {
		log.printf("ignored: %v", inErr)
		if isTerminal(a.stderr) { // someone trying it by hand
			fmt.Fprintln(a.stderr, "teammem hook:", inErr)
		}
		return
	}
	a.session = in.SessionID
	switch in.Event {
	case "SessionStart":
		a.hookSync(ctx, log, true, false, a.hookTimeout(log, hookPullTimeout))
		if in.Source == "compact" {
			a.hookCompacted(ctx, log, in, hf)
		}
	case "SessionEnd":
		a.hookSync(ctx, log, false, true, a.hookTimeout(log, hookPushTimeout))
		a.hookUploadNotes(ctx, log, in)
	case "Stop":
		a.hookStop(log, in, hf)
	case "PostToolUse":
		a.hookPostToolUse(log, in, hf)
	case "PreCompact":
		a.hookPreCompact(ctx, log, in, hf)
	}
}

// readHookInput decodes the hook JSON from stdin.
func (a *app) readHookInput() (hookInput, error) {
	var in hookInput
	if f, ok := a.stdin.(*os.File); ok && isTerminal(f) {
		return in, errors.New("no hook input: stdin is a terminal (Claude Code passes the event as JSON)")
	}
	b, err := io.ReadAll(io.LimitReader(a.stdin, maxHookInput+1))
	switch {
	case err != nil:
		return in, fmt.Errorf("read hook input: %w", err)
	case len(b) > maxHookInput:
		return in, fmt.Errorf("hook input larger than %d bytes", maxHookInput)
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return hookInput{}, fmt.Errorf("hook input is not a JSON object (%v): %.200q", err, b)
	}
	if in.Event == "" {
		return in, errors.New("hook input has no hook_event_name")
	}
	return in, nil
}

// hookTimeout returns TEAMMEM_HOOK_TIMEOUT (a duration, or seconds) or def.
func (a *app) hookTimeout(log *hookLog, def time.Duration) time.Duration {
	v := strings.TrimSpace(a.getenv("TEAMMEM_HOOK_TIMEOUT"))
	if v == "" {
		return def
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return d
	}
	log.printf("TEAMMEM_HOOK_TIMEOUT=%q: want a positive duration such as 5s; using %s", v, def)
	return def
}

// hookSync pulls or pushes both scopes within limit and logs the outcome.
// The sync runs beside the timer, so even a step that ignores the context
// (waiting for the state lock a watcher holds) cannot hold the agent up.
func (a *app) hookSync(ctx context.Context, log *hookLog, pull, push bool, limit time.Duration) {
	what := map[bool]string{true: "pull", false: "push"}[pull]
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	done := make(chan string, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Sprintf("internal error: %v", r)
			}
		}()
		done <- a.syncScopes(ctx, pull, push)
	}()
	select {
	case msg := <-done:
		log.printf("%s: %s", what, msg)
		return
	case <-ctx.Done():
	}
	select {
	case msg := <-done:
		log.printf("%s: gave up after %s: %s", what, limit, msg)
	case <-time.After(hookGrace):
		log.printf("%s: gave up after %s (server slow or unreachable, or another teammem holds the sync lock)", what, limit)
	}
}

// syncScopes syncs both scopes and summarises the outcome in one line.
func (a *app) syncScopes(ctx context.Context, pull, push bool) string {
	env, err := a.newSyncEnv()
	if err != nil {
		return "not synced: " + err.Error()
	}
	env.engine.Progress = nil
	tel := a.newTelemetry(env.engine.Client)
	var parts []string
	for _, s := range memsync.Scopes {
		start := time.Now()
		rep, err := env.engine.Sync(ctx, s, pull, push)
		tel.syncEvents(rep, pull, push, time.Since(start), err)
		if err != nil {
			parts = append(parts, fmt.Sprintf("%s failed: %v", s, err))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s", s, reportSummary(rep)))
	}
	tel.flush(ctx)
	return env.repo + ": " + strings.Join(parts, "; ")
}

// reportSummary says in a few words what a sync did.
func reportSummary(rep *memsync.Report) string {
	var parts []string
	for _, c := range []struct {
		keys []string
		what string
	}{{rep.Pulled, "pulled"}, {rep.RemovedLocal, "removed locally"}, {rep.Pushed, "pushed"},
		{rep.DeletedRemote, "deleted on the server"}, {rep.Merged, "merged"}, {rep.KeptLocal, "kept locally"},
		{rep.HeldForReview, "held for review"}} {
		if len(c.keys) > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", len(c.keys), c.what))
		}
	}
	if len(rep.Skipped) > 0 {
		// Named with the reason: a file kept off the server never goes unsaid.
		names := make([]string, len(rep.Skipped))
		for i, s := range rep.Skipped {
			names[i] = fmt.Sprintf("%s (%s)", s.Key, s.Kind)
		}
		parts = append(parts, fmt.Sprintf("%d skipped: %s", len(rep.Skipped), memsync.KeyList(names)))
	}
	parts = append(parts, rep.Notices()...)
	for _, ex := range rep.Excluded {
		parts = append(parts, "left alone "+ex.Dir+": "+ex.Reason)
	}
	if len(parts) == 0 {
		return "up to date"
	}
	return strings.Join(parts, ", ")
}

// hookLog appends timestamped lines to hook.log. One without a path (no
// config dir) writes to stderr, which Claude Code shows only in its
// verbose mode.
type hookLog struct {
	path   string
	event  string
	stderr io.Writer
}

// hookLogMax is the size past which hook.log is rotated to hook.log.1.
const hookLogMax = 1 << 20

// openHookLog returns the log of the memory dir the hook works on, falling
// back to <config dir>/teammem/hook.log when that dir cannot be resolved.
func (a *app) openHookLog(event string) *hookLog {
	l := &hookLog{event: first(event, "hook"), stderr: a.stderr}
	var warnings []string
	a.warn = func(msg string) { warnings = append(warnings, msg) } // until the log has its path
	defer func() {
		a.warn = func(msg string) { l.printf("warning: %s", msg) }
		for _, w := range warnings {
			a.warn(w)
		}
	}()
	if loc, err := a.location(); err == nil {
		if dir, err := a.localStateDir(loc); err == nil {
			l.path = filepath.Join(dir, "hook.log")
			return l
		}
	}
	if d, err := a.configDir(); err == nil {
		dir := filepath.Join(d, "teammem")
		if os.MkdirAll(dir, 0o700) == nil {
			l.path = filepath.Join(dir, "hook.log")
		}
	}
	return l
}

// printf logs one line, rotating the file once it passes hookLogMax.
func (l *hookLog) printf(format string, args ...any) {
	msg := strings.Join(strings.Fields(strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " | ")), " ")
	if len(msg) > 4000 {
		msg = msg[:4000] + "…"
	}
	line := fmt.Sprintf("%s pid=%d %s: %s\n", time.Now().Format("2006-01-02T15:04:05.000Z07:00"), os.Getpid(), l.event, msg)
	f, err := l.open()
	if err != nil {
		fmt.Fprint(l.stderr, "teammem hook: "+line)
		return
	}
	defer f.Close()
	_, _ = f.WriteString(line) // O_APPEND: concurrent hooks do not interleave within a line
}

// open opens the log for appending, first moving a full log aside.
func (l *hookLog) open() (*os.File, error) {
	if l.path == "" {
		return nil, errors.New("no log file")
	}
	if fi, err := os.Stat(l.path); err == nil && fi.Size() >= hookLogMax {
		_ = os.Rename(l.path, l.path+".1") // losing a race to another hook is fine
	}
	return os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}

// Bounds on the background Stop work: far beyond a normal run, they only
// stop a wedged child from living forever.
const (
	hookExtractLimit = 20 * time.Minute
	hookDreamLimit   = 60 * time.Minute
	// hookSettle is how long an extraction waits for Claude Code's own to
	// save the turn when both run (the reference's 60 s drain, §5.1).
	hookSettle = time.Minute
)

// startBackgroundStop re-executes teammem as a detached `hook
// --background-stop` process and returns without waiting for it. The child
// gets its own session (no controlling terminal, not in Claude Code's
// process group, so it outlives the hook), stdin and stdout on /dev/null
// and stderr on hook.log. No pipe to Claude Code is inherited, so Claude
// Code sees the hook finish at once.
func (a *app) startBackgroundStop(log *hookLog, in hookInput, skip ...string) {
	if in.SessionID == "" || in.TranscriptPath == "" {
		log.printf("nothing to extract: the input has no session_id or transcript_path")
		return
	}
	args := append(append([]string{"hook", "--background-stop", "--session", in.SessionID, "--transcript", in.TranscriptPath}, skip...), a.childFlags()...)
	cmd, err := a.detach(log, args...) // stderr on hook.log: a crash of the worker still leaves a trace
	if err != nil {
		log.printf("cannot start the background extraction: %v", err)
		return
	}
	what := "extraction and dream check"
	switch {
	case slices.Contains(skip, "--no-extract"):
		what = "dream check"
	case slices.Contains(skip, "--no-dream"):
		what = "extraction"
	}
	log.printf("session %s: %s started in the background (pid %d)", in.SessionID, what, cmd.Process.Pid)
	_ = cmd.Process.Release()
}

// childFlags passes the flags that choose the memory dir on to a child
// teammem; the working directory always goes as --cwd.
func (a *app) childFlags() []string {
	cwd := a.cwd
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	var flags []string
	if cwd != "" {
		flags = append(flags, "--cwd", cwd)
	}
	if a.dir != "" {
		flags = append(flags, "--dir", a.dir)
	}
	return flags
}

// runBackgroundStop is the detached Stop worker: `teammem extract` for the
// session, then `teammem dream` (its gates decide whether to consolidate),
// each as a child process whose outcome goes to hook.log. Stop fires after
// every turn, so runs for one memory dir are serialised: one runs, one more
// may wait, and any further one is dropped, since the waiting run reads the
// transcript after the running one is done.
func (a *app) runBackgroundStop(ctx context.Context, bg bgStopFlags) {
	session, transcript := bg.session, bg.transcript
	log := a.openHookLog("Stop")
	defer func() {
		if r := recover(); r != nil {
			log.printf("internal error: %v", r)
		}
	}()
	if session == "" || transcript == "" {
		log.printf("--background-stop needs --session and --transcript")
		return
	}
	if log.path != "" { // else there is no state dir to lock in, and runs may overlap
		release, ok, err := stopSlot(filepath.Dir(log.path))
		switch {
		case err != nil:
			log.printf("background work not serialised: %v", err) // better twice than never
		case !ok:
			log.printf("session %s: an extraction is already running and another is queued; skipped", session)
			return
		default:
			defer release()
		}
	}
	if !bg.noExtract {
		args := []string{"extract", "--session", session, "--transcript", transcript}
		if loc, err := a.location(); err == nil && claudeCodeEngine(a.getenv, loc).AutoMemory {
			args = append(args, "--settle", hookSettle.String()) // Claude Code extracts too: let it finish first
		}
		a.runChild(ctx, log, hookExtractLimit, args...)
	}
	if !bg.noDream {
		a.runChild(ctx, log, hookDreamLimit, "dream", "--session", session) // the current session does not count
	}
}

// runChild runs `teammem <args> <childFlags>` and logs its exit status and
// the last line it printed.
func (a *app) runChild(ctx context.Context, log *hookLog, limit time.Duration, args ...string) {
	self, err := os.Executable()
	if err != nil {
		log.printf("%s: %v", args[0], err)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, append(args, a.childFlags()...)...)
	var out tailBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// On the deadline ask first (SIGINT lets a dream roll its lock back),
	// then kill after WaitDelay.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second // a grandchild holding the pipe cannot hang us
	err = cmd.Run()
	last := out.lastLine()
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		log.printf("%s: killed after %s: %s", args[0], limit, last)
	case err != nil:
		log.printf("%s: failed (%v): %s", args[0], err, last)
	default:
		log.printf("%s: done: %s", args[0], first(last, "no output"))
	}
}

// stopSlot takes the Stop worker's turn in dir: it returns at once with
// ok when nothing runs, waits when a run is going on and no other waits,
// and returns !ok when one already waits. release ends the turn.
func stopSlot(dir string) (release func(), ok bool, err error) {
	running := filepath.Join(dir, "stop-running.lock")
	if release, err = filelock.TryLock(running); err == nil {
		return release, true, nil
	} else if !errors.Is(err, filelock.ErrBusy) {
		return nil, false, err
	}
	queued, err := filelock.TryLock(filepath.Join(dir, "stop-queued.lock"))
	if errors.Is(err, filelock.ErrBusy) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	defer queued()
	if release, err = filelock.Lock(running); err != nil {
		return nil, false, err
	}
	return release, true, nil
}

// tailBuffer keeps the last few KB written to it.
type tailBuffer struct{ b []byte }

// Write keeps the end of p; it never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	const keep = 8 << 10
	t.b = append(t.b, p...)
	if len(t.b) > keep {
		t.b = t.b[len(t.b)-keep:]
	}
	return len(p), nil
}

// lastLine returns the last non-empty line written.
func (t *tailBuffer) lastLine() string {
	lines := strings.Split(strings.TrimSpace(string(t.b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
