package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/teammem/teammem/internal/client/jobs/dream"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/llm"
)

// The lifecycle parts teammem's hooks can run next to the agent, as named
// in hook.log, status and lifecycle.json.
const (
	partExtract = "extract"
	partDream   = "dream"
	partNotes   = "session_memory"
)

// Hook-level skip reasons, on top of each command's own.
const (
	skipClaudeCode = "claude_code" // Claude Code runs this part itself
	skipNoModel    = "no_model"    // no model is configured for teammem
	skipSyncOnly   = "sync_only"   // the hook was installed with --sync-only
	skipLogMode    = "log_mode"    // long-running mode: a nightly schedule dreams instead
	skipDisabled   = "disabled"    // turned off by its TEAMMEM_* variable
)

// Engine choices of `hook install --engine` and `hook --engine`.
const (
	engineAuto   = "auto"   // run only what Claude Code will not
	engineAlways = "always" // run every part, whatever Claude Code does
)

// ccEngine is what Claude Code itself does with a project's memory, read
// from its environment and settings as it would (reference §2.1, §6.2).
// The issue that introduced this (teammem issue 14) observed that Claude
// Code 2.1.x runs its own extraction, auto-dream and session memory
// whenever its auto memory is on.
type ccEngine struct {
	// AutoMemory reports that Claude Code's auto memory is on, and with it
	// its own extraction and session notes; AutoMemoryBy says what decided.
	AutoMemory   bool   `json:"auto_memory"`
	AutoMemoryBy string `json:"auto_memory_by"`
	// Dream reports that Claude Code consolidates memory itself.
	Dream   bool   `json:"auto_dream"`
	DreamBy string `json:"auto_dream_by"`
}

// claudeCodeEngine works out ccEngine for loc's project: for auto memory,
// CLAUDE_CODE_DISABLE_AUTO_MEMORY (truthy: off; defined and falsy: on),
// then CLAUDE_CODE_SIMPLE (bare mode: off), then autoMemoryEnabled from
// the first settings file defining it (the repository's
// .claude/settings.local.json, .claude/settings.json, then the user's
// <config home>/settings.json), else on; for the dream, auto memory and
// then autoDreamEnabled the same way, on when undefined. Managed (policy)
// settings are not read.
func claudeCodeEngine(getenv func(string) string, loc memdir.Location) ccEngine {
	files := claudeSettingsFiles(loc)
	var e ccEngine
	env := strings.TrimSpace(getenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY"))
	switch {
	case isTruthy(env):
		e.AutoMemoryBy = "CLAUDE_CODE_DISABLE_AUTO_MEMORY=" + env
	case isDefinedFalsy(env):
		e.AutoMemory, e.AutoMemoryBy = true, "CLAUDE_CODE_DISABLE_AUTO_MEMORY="+env
	case isTruthy(getenv("CLAUDE_CODE_SIMPLE")):
		e.AutoMemoryBy = "CLAUDE_CODE_SIMPLE (bare mode)"
	default:
		e.AutoMemory, e.AutoMemoryBy = settingBool(files, "autoMemoryEnabled", true)
	}
	if !e.AutoMemory {
		e.DreamBy = "auto memory is off"
		return e
	}
	e.Dream, e.DreamBy = settingBool(files, "autoDreamEnabled", true)
	return e
}

// claudeSettingsFiles lists the settings files Claude Code reads for the
// project, highest precedence first.
func claudeSettingsFiles(loc memdir.Location) []string {
	root, ok := memdir.FindGitRoot(loc.ProjectRoot)
	if !ok {
		root = loc.ProjectRoot
	}
	return []string{filepath.Join(root, ".claude", "settings.local.json"), filepath.Join(root, ".claude", "settings.json"),
		filepath.Join(loc.ConfigHome, "settings.json")}
}

// settingBool returns the boolean key from the first file that defines it,
// with what decided, or def when none does. Unreadable and malformed files
// are skipped, as Claude Code skips them.
func settingBool(files []string, key string, def bool) (bool, string) {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		var v bool
		if raw, ok := m[key]; ok && json.Unmarshal(raw, &v) == nil {
			return v, fmt.Sprintf("%s=%v in %s", key, v, f)
		}
	}
	return def, key + " not set: " + map[bool]string{true: "on", false: "off"}[def] + " by default"
}

// isTruthy and isDefinedFalsy read environment values as the reference
// does (§1.1).
func isTruthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func isDefinedFalsy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "no", "off":
		return true
	}
	return false
}

// partPlan says whether teammem runs one part, and if not, why not.
type partPlan struct {
	Run    bool   `json:"run"`
	Reason string `json:"skip_reason,omitempty"`
	Why    string `json:"why"`
}

// enginePlan is who runs each part of the memory lifecycle for a project.
type enginePlan struct {
	Engine  string   `json:"engine"`
	Claude  ccEngine `json:"claude_code"`
	Mode    string   `json:"memory_mode"`
	Extract partPlan `json:"extract"`
	Dream   partPlan `json:"dream"`
	Notes   partPlan `json:"session_memory"`
}

// plan decides the parts for engine (engineAuto, engineAlways) or, with
// syncOnly, none. It does not look at the model: noModel does.
func (a *app) plan(loc memdir.Location, engine string, syncOnly bool) enginePlan {
	p := enginePlan{Engine: first(engine, engineAuto), Claude: claudeCodeEngine(a.getenv, loc), Mode: a.memoryMode().Mode}
	if syncOnly {
		p.Engine = "sync-only"
		off := partPlan{Reason: skipSyncOnly, Why: "installed with --sync-only"}
		p.Extract, p.Dream, p.Notes = off, off, off
		return p
	}
	auto := p.Engine == engineAuto
	mine := func(ccRuns bool, by string) partPlan {
		if auto && ccRuns {
			return partPlan{Reason: skipClaudeCode, Why: "Claude Code runs it (" + by + ")"}
		}
		if ccRuns {
			return partPlan{Run: true, Why: "--engine always, and Claude Code runs it too (" + by + ")"}
		}
		return partPlan{Run: true, Why: "Claude Code does not run it (" + by + ")"}
	}
	p.Extract = mine(p.Claude.AutoMemory, p.Claude.AutoMemoryBy)
	p.Notes = mine(p.Claude.AutoMemory, p.Claude.AutoMemoryBy)
	p.Dream = mine(p.Claude.Dream, p.Claude.DreamBy)
	if v := strings.TrimSpace(a.getenv(envSessionMemory)); isDefinedFalsy(v) {
		p.Notes = partPlan{Reason: skipDisabled, Why: envSessionMemory + "=" + v}
	}
	// autoDreamEnabled=false, or TEAMMEM_DREAM=0, turns teammem's dream off
	// too, as `teammem dream` reads them; TEAMMEM_DREAM=1 turns it back on.
	if cfg, err := dream.LoadConfig(a.getenv, loc.ConfigHome); err == nil && !cfg.Enabled && p.Dream.Run {
		p.Dream = partPlan{Reason: skipDisabled, Why: "turned off by " + cfg.DisabledBy + " (" + dream.EnvEnabled + "=1 turns teammem's on)"}
	}
	if p.Mode == modeLog && p.Dream.Run {
		p.Dream = partPlan{Reason: skipLogMode, Why: "long-running mode: the nightly schedule (dream --install-schedule) consolidates"}
	}
	return p
}

// envSessionMemory turns teammem's session notes off when falsy.
const envSessionMemory = "TEAMMEM_SESSION_MEMORY"

// noModel returns the reason no model call can be made: non-nil, wrapping
// llm.ErrNotConfigured, when no model is configured at all. A model that
// is configured but wrong is not reported here: its runs fail and say so.
func (a *app) noModel() error {
	_, err := llm.ConfigFromEnv(a.getenv)
	if errors.Is(err, llm.ErrNotConfigured) {
		return err
	}
	return nil
}

// by says who runs the part: teammem, Claude Code, or nobody and why not.
func (p partPlan) by() string {
	switch {
	case p.Run:
		return "teammem"
	case p.Reason == skipClaudeCode:
		return "Claude Code"
	}
	return "nobody (" + p.Reason + ")"
}
