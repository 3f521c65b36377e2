package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/ccsettings"
	"github.com/teammem/teammem/internal/client/memdir"
)

// settingsFlags chooses which Claude Code settings file to edit and, for
// install, which parts to install.
type settingsFlags struct {
	user, project, local bool
	engine               string
	syncOnly             bool
}

// add registers the flags on cmd; settingsPath checks they do not clash.
func (f *settingsFlags) add(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.user, "user", false, "<config home>/settings.json: every project on this machine (the default)")
	cmd.Flags().BoolVar(&f.project, "project", false, "<repository>/.claude/settings.json, which is usually checked in")
	cmd.Flags().BoolVar(&f.local, "local", false, "<repository>/.claude/settings.local.json: this checkout only, not checked in")
}

// hookInstallCmd is `teammem hook install`.
func (a *app) hookInstallCmd() *cobra.Command {
	var f settingsFlags
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Add teammem's hooks to Claude Code's settings.json: sync, and the memory engine where Claude Code has none",
		Long: "install adds one matcher group per event to the \"hooks\" of a Claude Code settings file,\n" +
			"each running this binary by its absolute path as `<path>/teammem hook` with a 30 s timeout:\n" +
			"SessionStart pulls, SessionEnd pushes; Stop extracts memories and checks the dream in the\n" +
			"background; PostToolUse, Stop, PreCompact and SessionStart keep the session notes.\n\n" +
			"It reads Claude Code's environment and settings (CLAUDE_CODE_DISABLE_AUTO_MEMORY,\n" +
			"autoMemoryEnabled, autoDreamEnabled) and by default installs only the parts Claude Code will\n" +
			"not run itself, saying which; --engine always installs every part, --sync-only only the syncs.\n" +
			"It also says when no model is configured, in which case the engine's parts are skipped.\n\n" +
			"--user (the default) edits <config home>/settings.json ($CLAUDE_CONFIG_DIR or ~/.claude),\n" +
			"so the hooks run in every project. --project edits .claude/settings.json at the root of the\n" +
			"repository (or the current directory), --local .claude/settings.local.json; the command holds\n" +
			"this machine's path, so prefer --local over --project in a repository others check out.\n\n" +
			"Installing again changes nothing, or replaces our entries when the binary moved. Every other\n" +
			"setting and hook is kept. A settings file that is not valid JSON is left untouched.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.engine != engineAuto && f.engine != engineAlways {
				return &usageError{fmt.Errorf("--engine %q: want auto or always", f.engine)}
			}
			if f.syncOnly && cmd.Flags().Changed("engine") {
				return &usageError{errors.New("give --sync-only or --engine, not both")}
			}
			return a.runHookSettings(f, true)
		},
	}
	f.add(cmd)
	cmd.Flags().StringVar(&f.engine, "engine", engineAuto, "auto: install only the parts Claude Code does not run itself; always: every part")
	cmd.Flags().BoolVar(&f.syncOnly, "sync-only", false, "install only the sync hooks (SessionStart pulls, SessionEnd pushes)")
	return cmd
}

// hookUninstallCmd is `teammem hook uninstall`.
func (a *app) hookUninstallCmd() *cobra.Command {
	var f settingsFlags
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove teammem's hooks from Claude Code's settings.json, and nothing else",
		Long: "uninstall removes every hook entry that runs `teammem hook` from the chosen settings file\n" +
			"(--user by default, --project or --local as for install), and the matcher groups and event\n" +
			"lists that this leaves empty. Everything else stays as it is.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return a.runHookSettings(f, false) },
	}
	f.add(cmd)
	return cmd
}

// hookSettingsOutput is what install and uninstall print with --json.
type hookSettingsOutput struct {
	Settings string   `json:"settings"`
	Changed  bool     `json:"changed"`
	Command  string   `json:"command"`
	Events   []string `json:"events"`
	Removed  int      `json:"removed"`
	// Plan says who runs each part; NoModel, when set, why teammem's parts
	// will be skipped until a model is configured.
	Plan    *enginePlan `json:"plan,omitempty"`
	NoModel string      `json:"no_model,omitempty"`
}

// runHookSettings installs or uninstalls our hooks in the chosen file.
func (a *app) runHookSettings(f settingsFlags, install bool) error {
	file, err := a.settingsPath(f)
	if err != nil {
		return err
	}
	command, err := hookCommand()
	if err != nil {
		return err
	}
	out := hookSettingsOutput{Settings: file, Command: command, Events: []string{}}
	var res ccsettings.Result
	if install {
		if err := a.planHooks(&out, f); err != nil {
			return err
		}
		res, err = ccsettings.Install(file, out.Command, out.Events)
	} else {
		res, err = ccsettings.Uninstall(file, command)
	}
	if err != nil {
		return err
	}
	out.Changed, out.Removed = res.Changed, res.Removed
	if a.jsonOut {
		return a.printJSON(out)
	}
	a.printHookSettings(out, install)
	return nil
}

// planHooks fills in what install will write: the plan of who runs each
// part, the events it needs and the flags the command carries.
func (a *app) planHooks(out *hookSettingsOutput, f settingsFlags) error {
	loc, err := a.location()
	if err != nil {
		return err
	}
	plan := a.plan(loc, f.engine, f.syncOnly)
	out.Command += hookFlagsSuffix(f)
	out.Events, out.Plan = installEvents(plan), &plan
	if err := a.noModel(); err != nil && (plan.Extract.Run || plan.Dream.Run || plan.Notes.Run) {
		out.NoModel = err.Error()
	}
	return nil
}

// printHookSettings says what install or uninstall did, for people.
func (a *app) printHookSettings(o hookSettingsOutput, install bool) {
	w := a.stdout
	switch {
	case install && !o.Changed:
		fmt.Fprintf(w, "teammem's hooks are already in %s\n", o.Settings)
		a.printPlan(o)
	case install:
		fmt.Fprintf(w, "added teammem's hooks to %s:\n", o.Settings)
		fmt.Fprintf(w, "  %s → %s\n", strings.Join(o.Events, ", "), o.Command)
		if o.Removed > 0 {
			fmt.Fprintf(w, "  (replacing %d older teammem entries)\n", o.Removed)
		}
		a.printPlan(o)
	case o.Changed:
		fmt.Fprintf(w, "removed %d teammem hook entries from %s\n", o.Removed, o.Settings)
	default:
		fmt.Fprintf(w, "no teammem hooks in %s\n", o.Settings)
	}
}

// settingsPath returns the settings file the flags choose.
func (a *app) settingsPath(f settingsFlags) (string, error) {
	n := 0
	for _, set := range []bool{f.user, f.project, f.local} {
		if set {
			n++
		}
	}
	if n > 1 {
		return "", &usageError{errors.New("give at most one of --user, --project and --local")}
	}
	loc, err := a.location()
	if err != nil {
		return "", err
	}
	if !f.project && !f.local {
		return filepath.Join(loc.ConfigHome, "settings.json"), nil
	}
	root, ok := memdir.FindGitRoot(loc.ProjectRoot) // a worktree's own root, where Claude Code reads .claude/
	if !ok {
		root = loc.ProjectRoot
	}
	name := "settings.json"
	if f.local {
		name = "settings.local.json"
	}
	return filepath.Join(root, ".claude", name), nil
}

// hookCommand is the command our hook entries run: this binary by its
// absolute path, shell-quoted when needed, then "hook". When the binary is
// reached through PATH (often a symlink a package manager keeps stable
// across upgrades), that path is used instead of the resolved one.
func hookCommand() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the teammem binary: %w", err)
	}
	if p, err := exec.LookPath(filepath.Base(self)); err == nil {
		if abs, err := filepath.Abs(p); err == nil && sameFile(abs, self) {
			self = abs
		}
	}
	return shellQuote(self) + " hook", nil
}

// sameFile reports whether a and b are the same file on disk.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// shellSafe matches strings sh reads as one word without quotes.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellQuote quotes s for sh, which Claude Code runs hook commands with.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
