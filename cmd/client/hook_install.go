package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/memdir"
)

// hookEvents are the Claude Code events `hook install` may register, in
// the order they are added to settings.json; installEvents picks those a
// plan needs.
var hookEvents = []string{"SessionStart", "Stop", "SessionEnd", "PostToolUse", "PreCompact"}

// hookEntryTimeout is the "timeout" (seconds) of our hook entries: Claude
// Code kills a hook after it. The hook bounds its own work well below.
const hookEntryTimeout = 30

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
	var plan enginePlan
	events := hookEvents
	if install {
		loc, err := a.location()
		if err != nil {
			return err
		}
		plan = a.plan(loc, f.engine, f.syncOnly)
		command += hookFlagsSuffix(f)
		events = installEvents(plan)
	}
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	out := hookSettingsOutput{Settings: file, Command: command, Events: []string{}}
	var edited []byte
	if install {
		edited, out.Removed, out.Changed, err = installHooks(data, command, events)
		out.Events, out.Plan = events, &plan
		if err := a.noModel(); err != nil && (plan.Extract.Run || plan.Dream.Run || plan.Notes.Run) {
			out.NoModel = err.Error()
		}
	} else if data != nil {
		edited, out.Removed, err = uninstallHooks(data, command)
		out.Changed = out.Removed > 0
	}
	if err != nil {
		return fmt.Errorf("%s: %w; nothing was changed", file, err)
	}
	if out.Changed {
		if err := writeSettings(file, edited); err != nil {
			return err
		}
	}
	if a.jsonOut {
		return a.printJSON(out)
	}
	a.printHookSettings(out, install)
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

// isTeammemHook reports whether a hook command is ours: exactly the
// command we would write, or any "<path>/teammem hook" with or without the
// flags install writes (an older install from another path or with other
// parts).
func isTeammemHook(command, ours string) bool {
	c := strings.TrimSpace(command)
	if c == ours {
		return true
	}
	for _, flags := range hookFlagSuffixes {
		c = strings.TrimSuffix(c, flags)
	}
	prog, ok := strings.CutSuffix(c, " hook")
	if !ok {
		return false
	}
	prog = strings.TrimSpace(prog)
	if n := len(prog); n >= 2 && (prog[0] == '\'' && prog[n-1] == '\'' || prog[0] == '"' && prog[n-1] == '"') {
		prog = strings.ReplaceAll(prog[1:n-1], `'\''`, `'`)
	}
	return path.Base(filepath.ToSlash(prog)) == "teammem"
}

// newHookGroup is the matcher group install adds to each event. The empty
// matcher matches every SessionStart source and SessionEnd reason (Stop
// has no matcher and ignores it).
type newHookGroup struct {
	Matcher string         `json:"matcher"`
	Hooks   []newHookEntry `json:"hooks"`
}

// newHookEntry is Claude Code's command hook: sh runs Command with the
// event's JSON on stdin, and kills it after Timeout seconds.
type newHookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// installHooks returns settings data with one group running command in
// each of events, unless an entry with exactly that command is there.
// Other teammem entries (another path or other flags), and teammem entries
// of hookEvents not in events, are removed and counted. changed reports
// whether out differs from data; data nil means no file yet.
func installHooks(data []byte, command string, events []string) (out []byte, removed int, changed bool, err error) {
	top, hooks, err := parseSettings(data)
	if err != nil {
		return nil, 0, false, err
	}
	for _, event := range hookEvents {
		if slices.Contains(events, event) {
			continue
		}
		groups, err := eventGroups(hooks, event)
		if err != nil {
			continue // not ours to judge
		}
		kept, _, n := pruneHooks(groups, command, false)
		if n == 0 {
			continue
		}
		removed, changed = removed+n, true
		if len(kept) == 0 {
			hooks.del(event)
		} else {
			hooks.set(event, marshalNoEscape(kept))
		}
	}
	for _, event := range events {
		groups, err := eventGroups(hooks, event)
		if err != nil {
			return nil, 0, false, err
		}
		kept, found, n := pruneHooks(groups, command, true)
		removed += n
		if found && n == 0 {
			continue
		}
		if !found {
			kept = append(kept, marshalNoEscape(newHookGroup{Hooks: []newHookEntry{{Type: "command", Command: command, Timeout: hookEntryTimeout}}}))
		}
		hooks.set(event, marshalNoEscape(kept))
		changed = true
	}
	if !changed {
		return data, 0, false, nil
	}
	top.set("hooks", marshalNoEscape(hooks))
	return append(marshalNoEscape(top), '\n'), removed, true, nil
}

// uninstallHooks returns settings data without any teammem hook entry
// (command, or any other "<path>/teammem hook") in any event, dropping the groups and events that leaves empty and the
// "hooks" key if nothing is left in it. removed counts the entries.
func uninstallHooks(data []byte, command string) (out []byte, removed int, err error) {
	top, hooks, err := parseSettings(data)
	if err != nil {
		return nil, 0, err
	}
	for _, event := range append([]string(nil), hooks.keys...) {
		groups, err := eventGroups(hooks, event)
		if err != nil {
			continue // not ours to judge: an event we never write, left as it is
		}
		kept, _, n := pruneHooks(groups, command, false)
		if n == 0 {
			continue
		}
		removed += n
		if len(kept) == 0 {
			hooks.del(event)
		} else {
			hooks.set(event, marshalNoEscape(kept))
		}
	}
	if removed == 0 {
		return data, 0, nil
	}
	if len(hooks.keys) == 0 {
		top.del("hooks")
	} else {
		top.set("hooks", marshalNoEscape(hooks))
	}
	return append(marshalNoEscape(top), '\n'), removed, nil
}

// parseSettings parses a settings file into its top-level object and its
// "hooks" object (empty when absent or null). Empty data is an empty file.
func parseSettings(data []byte) (top, hooks *jsonObject, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, nil, fmt.Errorf("not valid JSON (line %d, column %d: %v)", line, col, se)
		}
		return nil, nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if top, err = parseJSONObject(data); err != nil {
		return nil, nil, errors.New("not a JSON object")
	}
	hooks = &jsonObject{vals: map[string]json.RawMessage{}}
	if raw, ok := top.get("hooks"); ok && string(raw) != "null" {
		if hooks, err = parseJSONObject(raw); err != nil {
			return nil, nil, errors.New(`"hooks" is not a JSON object`)
		}
	}
	return top, hooks, nil
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	before := data[:min(int(offset), len(data))]
	line = bytes.Count(before, []byte("\n")) + 1
	return line, len(before) - bytes.LastIndexByte(before, '\n') - 1 // Offset is just past the bad byte
}

// eventGroups returns the matcher groups of an event: none when absent or
// null, an error when the value is not an array.
func eventGroups(hooks *jsonObject, event string) ([]json.RawMessage, error) {
	raw, ok := hooks.get(event)
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var groups []json.RawMessage
	if err := json.Unmarshal(raw, &groups); err != nil {
		return nil, fmt.Errorf(`"hooks.%s" is not a JSON array`, event)
	}
	return groups, nil
}

// pruneHooks removes teammem entries from an event's groups. With keep, the
// first entry whose command is exactly ours stays (found reports it). A
// group left with no hooks is dropped; groups and entries that are not
// ours, including ones that do not parse, stay byte for byte.
func pruneHooks(groups []json.RawMessage, ours string, keep bool) (out []json.RawMessage, found bool, removed int) {
	for _, raw := range groups {
		g, err := parseJSONObject(raw)
		var entries []json.RawMessage
		if err == nil {
			hooksRaw, _ := g.get("hooks")
			err = json.Unmarshal(hooksRaw, &entries)
		}
		if err != nil {
			out = append(out, raw)
			continue
		}
		var left []json.RawMessage
		for _, e := range entries {
			var h struct{ Type, Command string }
			if json.Unmarshal(e, &h) != nil || h.Type != "command" || !isTeammemHook(h.Command, ours) {
				left = append(left, e)
			} else if keep && !found && strings.TrimSpace(h.Command) == ours {
				found = true
				left = append(left, e)
			} else {
				removed++
			}
		}
		switch {
		case len(left) == len(entries):
			out = append(out, raw)
		case len(left) > 0:
			g.set("hooks", marshalNoEscape(left))
			out = append(out, marshalNoEscape(g))
		}
	}
	return out, found, removed
}

// writeSettings replaces a settings file atomically: a temp file in the
// same directory, fsynced and renamed over it. The file's mode is kept, a
// symlinked settings file (dotfile managers) is written through, and
// missing directories are created.
func writeSettings(file string, data []byte) error {
	target, mode := file, os.FileMode(0o644)
	if real, err := filepath.EvalSymlinks(file); err == nil {
		target = real
	}
	if fi, err := os.Stat(target); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".settings-teammem-*.json")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), target)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", file, err)
	}
	return nil
}

// jsonObject is a JSON object that keeps its keys in their original order
// and its values as they were written, so that editing one key of a
// settings file leaves the rest as the user wrote it (bar indentation).
type jsonObject struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseJSONObject parses data, which must be valid JSON, as an object. A
// repeated key keeps its first position and its last value, as JSON.parse.
func parseJSONObject(data []byte) (*jsonObject, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	o := &jsonObject{vals: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		o.set(tok.(string), v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

// get returns key's value as written, and whether key is present.
func (o *jsonObject) get(key string) (json.RawMessage, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// set replaces key's value in place, or appends key.
func (o *jsonObject) set(key string, v json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// del removes key, if present, keeping the others' order.
func (o *jsonObject) del(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// MarshalJSON writes the object with its keys in order.
func (o *jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshalNoEscape(k))
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalNoEscape encodes v as JSON indented by two spaces, as Claude
// Code writes settings, without escaping <, > and & (commands hold them).
// v is always encodable here.
func marshalNoEscape(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("encode settings: %v", err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
