package subagentmem

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// Agent is one agent's memory in one scope: a directory that exists, or
// the directory a definition or a snapshot points at.
type Agent struct {
	// Type is the agent type ("reviewer", "plugin:reviewer"). For a
	// directory no definition or snapshot explains, it is the directory
	// name, since ':' cannot be recovered from '-'.
	Type    string `json:"agent_type"`
	DirName string `json:"dir_name"`
	Scope   Scope  `json:"scope"`
	Dir     string `json:"dir"`
	Exists  bool   `json:"exists"`
	// Files counts the regular *.md files in Dir and its subdirectories.
	Files int `json:"md_files"`
	// Declared is the scope the agent's definition declares, when one was
	// found.
	Declared Scope `json:"declared_scope,omitempty"`
	// Decision is the snapshot decision for this directory; "none" unless
	// Snapshot is set.
	Decision Decision `json:"decision"`
	// Snapshot is the project's snapshot when it applies to this scope.
	Snapshot *Snapshot `json:"snapshot,omitempty"`
}

// Snapshot is a project's snapshot of one agent's memory as seen from the
// directory it applies to.
type Snapshot struct {
	Dir        string `json:"dir"`
	UpdatedAt  string `json:"updated_at,omitempty"`
	SyncedFrom string `json:"synced_from,omitempty"`
}

// List finds every agent memory under r, sorted by type then scope:
//
//   - each directory under the three scope bases;
//   - each agent definition (<config home>/agents/**.md, then
//     <project>/.claude/agents/**.md, which wins) whose frontmatter
//     declares a memory scope, even before its directory exists;
//   - each snapshot directory, applied to the scope the agent declares or,
//     with no definition, to user scope: the only one Claude Code seeds.
//
// Missing directories are not errors; unreadable ones are.
func List(r Roots) ([]Agent, error) {
	defs, err := Definitions(r)
	if err != nil {
		return nil, err
	}
	snaps, err := subdirs(r.SnapshotsDir())
	if err != nil {
		return nil, err
	}
	// Types known by name let directories show "plugin:agent", not "plugin-agent".
	types := map[string]string{}
	for t := range defs {
		types[DirName(t)] = t
	}
	for _, t := range snaps {
		types[DirName(t)] = t
	}
	byKey := map[string]*Agent{}
	add := func(scope Scope, agentType string) *Agent {
		key := string(scope) + "\x00" + DirName(agentType)
		if a, ok := byKey[key]; ok {
			return a
		}
		a := &Agent{Type: agentType, DirName: DirName(agentType), Scope: scope, Dir: r.Dir(scope, agentType),
			Declared: defs[agentType], Decision: DecisionNone}
		byKey[key] = a
		return a
	}
	for _, scope := range Scopes {
		names, err := subdirs(r.Base(scope))
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			add(scope, cmp.Or(types[name], name))
		}
	}
	for t, scope := range defs {
		add(scope, t)
	}
	for _, t := range snaps {
		if _, ok := ReadSnapshot(r.SnapshotDir(t)); !ok {
			continue // no valid snapshot.json: not a snapshot
		}
		a := add(cmp.Or(defs[t], ScopeUser), t)
		st := Check(r.SnapshotDir(t), a.Dir)
		a.Decision = st.Decision
		a.Snapshot = &Snapshot{Dir: r.SnapshotDir(t), UpdatedAt: st.UpdatedAt, SyncedFrom: st.SyncedFrom}
	}
	out := make([]Agent, 0, len(byKey))
	for _, a := range byKey {
		a.Exists, a.Files = countMarkdown(a.Dir)
		out = append(out, *a)
	}
	slices.SortFunc(out, func(x, y Agent) int {
		return cmp.Or(cmp.Compare(x.Type, y.Type), cmp.Compare(slices.Index(Scopes, x.Scope), slices.Index(Scopes, y.Scope)))
	})
	return out, nil
}

// Definitions returns the memory scope each agent definition declares, by
// agent type: the frontmatter's name and memory keys of the Markdown files
// under <config home>/agents and then <project>/.claude/agents, so that a
// project definition overrides a user one of the same name. Definitions
// without a valid memory scope or a usable name are left out.
func Definitions(r Roots) (map[string]Scope, error) {
	defs := map[string]Scope{}
	for _, dir := range []string{filepath.Join(r.ConfigHome, "agents"), filepath.Join(r.Project, ".claude", "agents")} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == dir && errors.Is(err, fs.ErrNotExist) {
					return fs.SkipDir
				}
				return err
			}
			if !d.Type().IsRegular() || !strings.HasSuffix(d.Name(), ".md") {
				return nil
			}
			if t, scope, ok := readDefinition(path); ok {
				defs[t] = scope
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read agent definitions: %w", err)
		}
	}
	return defs, nil
}

// readDefinition returns the type and memory scope an agent definition
// file declares.
func readDefinition(path string) (agentType string, scope Scope, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", false
	}
	fm, _, found := teammem.ParseFrontmatter(string(b))
	if !found || fm.Raw == nil {
		return "", "", false
	}
	s, _ := fm.Raw["memory"].(string)
	scope = Scope(s)
	agentType = strings.TrimSpace(fm.Name)
	return agentType, scope, scope.Valid() && ValidType(agentType)
}

// subdirs returns the names of the directories in dir (following
// symlinks); nothing when dir does not exist.
func subdirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var names []string
	for _, e := range entries {
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && fi.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// countMarkdown reports whether dir exists and how many regular *.md
// files it holds at any depth.
func countMarkdown(dir string) (exists bool, n int) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return false, 0
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // WalkDir does not descend into a symlinked root
	}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".md") {
			n++
		}
		return nil // an unreadable subdirectory only lowers the count
	})
	return true, n
}
