package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/teammem/teammem/internal/client/jobs/sessionmem"
	"github.com/teammem/teammem/internal/client/memdir"
)

// The Claude Code hook events teammem reads, as its hooks reference
// documents them: every event's JSON on stdin carries session_id,
// transcript_path, cwd, permission_mode and hook_event_name. SessionStart
// adds source ("startup", "resume", "clear" or "compact", the last after
// an automatic or manual compaction), PreCompact adds trigger ("manual"
// or "auto") and custom_instructions, PostToolUse adds tool_name,
// tool_input, tool_response and tool_use_id. Claude Code waits for a
// command hook until it exits or its entry's timeout passes; on exit 0 a
// SessionStart hook's stdout may be a JSON object whose
// hookSpecificOutput {hookEventName: "SessionStart", additionalContext}
// Claude Code adds to the context. PreCompact has no such field (only a
// top-level decision that could block the compaction), so it prints
// nothing.

// hookFlags are the flags an installed hook entry carries.
type hookFlags struct {
	engine   string
	syncOnly bool
}

// sessionStartOutput is SessionStart's answer on stdout.
type sessionStartOutput struct {
	HookSpecificOutput struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// hookPlan returns the parts the hook runs, with a part that would run
// but has no model turned into a no_model skip.
func (a *app) hookPlan(loc memdir.Location, hf hookFlags) enginePlan {
	p := a.plan(loc, hf.engine, hf.syncOnly)
	if err := a.noModel(); err != nil {
		for _, pp := range []*partPlan{&p.Extract, &p.Dream, &p.Notes} {
			if pp.Run {
				*pp = partPlan{Reason: skipNoModel, Why: err.Error()}
			}
		}
	}
	return p
}

// expectedSkips are the hook-level skips that follow a choice (Claude
// Code's engine, --sync-only, a setting, the long-running mode): counted,
// never logged.
var expectedSkips = map[string]bool{skipClaudeCode: true, skipSyncOnly: true, skipDisabled: true, skipLogMode: true}

// notePlan records the plan's skips in lifecycle.json and logs, in one
// line, the unexpected ones (no model) not logged today.
func (a *app) notePlan(log *hookLog, loc memdir.Location, p enginePlan, parts ...string) {
	stateDir, err := a.localStateDir(loc)
	if err != nil {
		return
	}
	reasons := map[string]string{}
	for _, part := range parts {
		reasons[part] = p.part(part).Reason
	}
	byReason := map[string][]string{}
	why := map[string]string{}
	for _, part := range noteParts(stateDir, time.Now(), reasons) {
		if r := reasons[part]; !expectedSkips[r] {
			byReason[r] = append(byReason[r], part)
			why[r] = p.part(part).Why
		}
	}
	for _, r := range slices.Sorted(maps.Keys(byReason)) {
		log.printf("%s skipped (%s): %s; said once a day, counted in `teammem status`", strings.Join(byReason[r], ", "), r, why[r])
	}
}

// part returns the plan of one part by name.
func (p enginePlan) part(name string) partPlan {
	switch name {
	case partExtract:
		return p.Extract
	case partDream:
		return p.Dream
	}
	return p.Notes
}

// hookStop starts what Stop runs: extraction and the dream in the Stop
// worker, and a notes update when one is due.
func (a *app) hookStop(log *hookLog, in hookInput, hf hookFlags) {
	loc, err := a.location()
	if err != nil {
		log.printf("%v", err)
		return
	}
	p := a.hookPlan(loc, hf)
	a.notePlan(log, loc, p, partExtract, partDream, partNotes)
	var skip []string
	if !p.Extract.Run {
		skip = append(skip, "--no-extract")
	}
	if !p.Dream.Run {
		skip = append(skip, "--no-dream")
	}
	if len(skip) < 2 {
		a.startBackgroundStop(log, in, skip...)
	}
	if p.Notes.Run {
		a.hookNotes(log, loc, in)
	}
}

// hookPostToolUse checks the notes' gates and starts an update when due.
// It runs after every tool call, so it logs only what it starts.
func (a *app) hookPostToolUse(log *hookLog, in hookInput, hf hookFlags) {
	loc, err := a.location()
	if err != nil {
		return
	}
	if p := a.hookPlan(loc, hf); p.Notes.Run {
		a.hookNotes(log, loc, in)
	}
}

// hookNotes checks the session's gates (reading only what the transcript
// gained) and, when an update is due, starts it detached.
func (a *app) hookNotes(log *hookLog, loc memdir.Location, in hookInput) {
	if in.SessionID == "" || in.TranscriptPath == "" {
		return
	}
	o, err := a.sessionOptions(loc, in.SessionID, in.TranscriptPath, in.Cwd)
	if err != nil {
		log.printf("session notes: %v", err)
		return
	}
	rep, err := sessionmem.Check(o)
	switch {
	case err != nil:
		log.printf("session %s: session notes: %v", in.SessionID, err)
		return
	case rep.Outcome != sessionmem.OutcomeDue:
		return
	}
	cmd, err := a.detach(log, a.notesArgs(in)...)
	if err != nil {
		log.printf("session %s: cannot start the notes update: %v", in.SessionID, err)
		return
	}
	log.printf("session %s: notes update started in the background (pid %d): %s", in.SessionID, cmd.Process.Pid, rep.Message)
	_ = cmd.Process.Release()
}

// notesArgs are the arguments of a detached notes update.
func (a *app) notesArgs(in hookInput, extra ...string) []string {
	args := []string{"session-memory", "--from-hook", "--session", in.SessionID, "--transcript", in.TranscriptPath}
	if in.Cwd != "" {
		args = append(args, "--session-cwd", in.Cwd)
	}
	return append(append(args, extra...), a.childFlags()...)
}

// hookPreCompact brings the notes up to date before Claude Code compacts
// the session: an update, forced past the token and tool-call gates,
// runs detached and the hook waits for it up to sessionmem.DefaultWait
// (the reference's 15 s). A slower update goes on after the hook returns,
// and SessionStart(compact) waits for it again.
func (a *app) hookPreCompact(ctx context.Context, log *hookLog, in hookInput, hf hookFlags) {
	loc, err := a.location()
	if err != nil || in.SessionID == "" || in.TranscriptPath == "" {
		return
	}
	p := a.hookPlan(loc, hf)
	a.notePlan(log, loc, p, partNotes)
	if !p.Notes.Run {
		return
	}
	limit := a.hookTimeout(log, sessionmem.DefaultWait)
	cmd, err := a.detach(log, a.notesArgs(in, "--force", "--wait", limit.String())...)
	if err != nil {
		log.printf("session %s: cannot start the notes update: %v", in.SessionID, err)
		return
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		log.printf("session %s: notes update done before the %s compaction", in.SessionID, first(in.Trigger, "coming"))
	case <-time.After(limit):
		log.printf("session %s: the notes update still runs after %s; the compaction goes ahead and the update finishes in the background",
			in.SessionID, limit)
	case <-ctx.Done():
	}
}

// hookCompacted prints the session's notes as additional context after a
// compaction, waiting up to sessionmem.DefaultWait for an update in flight.
func (a *app) hookCompacted(ctx context.Context, log *hookLog, in hookInput, hf hookFlags) {
	loc, err := a.location()
	if err != nil || in.SessionID == "" {
		return
	}
	if p := a.plan(loc, hf.engine, hf.syncOnly); !p.Notes.Run {
		return
	}
	o, err := a.sessionOptions(loc, in.SessionID, first(in.TranscriptPath, os.DevNull), in.Cwd)
	if err != nil {
		log.printf("session notes: %v", err)
		return
	}
	if !sessionmem.WaitIdle(ctx, o.StateDir, o.SessionID, a.hookTimeout(log, sessionmem.DefaultWait)) {
		log.printf("session %s: a notes update is still running; injecting the notes as they are", in.SessionID)
	}
	notes, ok := sessionmem.ReadNotes(o.NotesPath, o.Texts.Template)
	if !ok {
		return
	}
	var out sessionStartOutput
	out.HookSpecificOutput.HookEventName = "SessionStart"
	out.HookSpecificOutput.AdditionalContext = sessionmem.CompactionContext(notes, o.NotesPath, 0)
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		log.printf("session %s: cannot write the notes: %v", in.SessionID, err)
		return
	}
	log.printf("session %s: gave the compacted session its notes (%d characters)", in.SessionID, len(out.HookSpecificOutput.AdditionalContext))
}

// detach starts `teammem <args>` in its own session with stdin and stdout
// on /dev/null and stderr on hook.log, so it outlives the hook and holds
// no pipe of Claude Code's.
func (a *app) detach(log *hookLog, args ...string) (*exec.Cmd, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	devNull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	cmd := exec.Command(self, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devNull, devNull, devNull
	if f, err := log.open(); err == nil {
		defer f.Close()
		cmd.Stderr = f
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start teammem %s: %w", strings.Join(args[:1], " "), err)
	}
	return cmd, nil
}
