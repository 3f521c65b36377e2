package dream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/teammem/teammem/internal/client/jobs/agent"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
)

// Outcomes of a run, the values telemetry reports as the outcome of
// teammem_dream_run.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
	OutcomeDryRun    = "dry_run"
)

// Report is what a run did.
type Report struct {
	Outcome string
	// Touched are the memory keys written, edited or deleted, in order
	// (in the copy, for a dry run).
	Touched []string
	// Denied are the sandbox's refusals.
	Denied []string
	// Summary is the model's closing text.
	Summary      string
	Turns        int
	HitTurnLimit bool
	Usage        llm.Usage
	// Diff is a dry run's unified diff of every file changed, added or
	// deleted; "" when nothing changed.
	Diff string
}

// Run consolidates the memory for plan, which Check returned. On success
// the lock stays, its mtime the time the run fired: the new time of the
// last consolidation. When the model fails or ctx is cancelled (Ctrl-C)
// the lock is rolled back to plan.PriorMtime and the error returned. A dry
// run works on a copy of the memory directory, reports the diff, changes
// nothing in the real directory and rolls the lock back.
func (d *Dreamer) Run(ctx context.Context, plan Plan) (Report, error) {
	if d.Model == nil {
		return Report{Outcome: OutcomeFailed}, errors.Join(errors.New("dream: no model"), Rollback(d.MemoryDir, plan.PriorMtime))
	}
	root := d.MemoryDir
	if d.Config.DryRun {
		tmp, err := copyMemory(d.MemoryDir)
		if err != nil {
			return Report{Outcome: OutcomeFailed}, errors.Join(err, Rollback(d.MemoryDir, plan.PriorMtime))
		}
		defer os.RemoveAll(filepath.Dir(tmp))
		root = tmp
	}
	sb := &agent.Sandbox{Root: root, Scanner: d.Scanner, NoNewTeamFiles: true}
	in := PromptInput{MemoryDir: root, Now: plan.FiredAt, LastConsolidated: plan.LastConsolidated,
		Sessions: plan.Sessions, Logs: dailyLogs(d.MemoryDir, plan.LastConsolidated), MaxTurns: d.maxTurns()}
	if dirExists(d.TranscriptDir) {
		sb.ReadRoots, in.TranscriptDir = []string{d.TranscriptDir}, d.TranscriptDir
	}
	runner := &consolidate.Runner{Model: d.Model, Toolbox: sb, System: SystemPrompt, MaxTurns: d.maxTurns(), OnTurn: d.OnTurn}
	res, err := runner.Run(ctx, BuildPrompt(in))
	rep := Report{Outcome: OutcomeCompleted, Touched: res.Touched, Denied: res.Denied, Summary: strings.TrimSpace(res.Final),
		Turns: res.Turns, HitTurnLimit: res.HitTurnLimit, Usage: res.Usage}
	if err != nil {
		rep.Outcome = OutcomeFailed
		if ctx.Err() != nil {
			err = fmt.Errorf("dream interrupted: %w", ctx.Err())
		} else {
			err = fmt.Errorf("dream: %w", err)
		}
		return rep, errors.Join(err, Rollback(d.MemoryDir, plan.PriorMtime))
	}
	if d.Config.DryRun {
		rep.Outcome = OutcomeDryRun
		diff, err := diffTrees(d.MemoryDir, root)
		rep.Diff = diff
		return rep, errors.Join(err, Rollback(d.MemoryDir, plan.PriorMtime))
	}
	return rep, nil
}

func (d *Dreamer) maxTurns() int {
	if d.Config.MaxTurns > 0 {
		return d.Config.MaxTurns
	}
	return DefaultMaxTurns
}

// copyMemory copies the files of the memory directory (as Scan sees them:
// no symlinks, no lock, no temp files) into a new temporary directory and
// returns the copy's root, <tmp>/memory.
func copyMemory(dir string) (string, error) {
	files, _, err := memdir.Scan(dir, memdir.ScanOptions{MaxBytes: 1 << 30})
	if err != nil {
		return "", fmt.Errorf("dry run: %w", err)
	}
	tmp, err := os.MkdirTemp("", "teammem-dream-")
	if err != nil {
		return "", fmt.Errorf("dry run: %w", err)
	}
	root := filepath.Join(tmp, "memory")
	for _, f := range append([]memdir.File{{Key: "."}}, files...) {
		p := filepath.Join(root, filepath.FromSlash(f.Key))
		if f.Key == "." {
			err = os.MkdirAll(p, 0o755)
		} else if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			err = os.WriteFile(p, f.Content, 0o644)
		}
		if err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("dry run: copy %s: %w", f.Key, err)
		}
	}
	return root, nil
}

// diffTrees returns the unified diffs of every file that differs between
// the memory directories a and b, by key.
func diffTrees(a, b string) (string, error) {
	read := func(dir string) (map[string]string, error) {
		files, _, err := memdir.Scan(dir, memdir.ScanOptions{MaxBytes: 1 << 30})
		m := map[string]string{}
		for _, f := range files {
			m[f.Key] = string(f.Content)
		}
		return m, err
	}
	before, err := read(a)
	if err != nil {
		return "", fmt.Errorf("dry run: %w", err)
	}
	after, err := read(b)
	if err != nil {
		return "", fmt.Errorf("dry run: %w", err)
	}
	keys := make([]string, 0, len(before)+len(after))
	for k := range before {
		keys = append(keys, k)
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out strings.Builder
	for _, k := range keys {
		old, inA := before[k]
		cur, inB := after[k]
		oldName, newName := "a/"+k, "b/"+k
		if !inA {
			oldName = "/dev/null"
		}
		if !inB {
			newName = "/dev/null"
		}
		if inA != inB && old == cur { // an empty file added or deleted
			fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
			continue
		}
		out.WriteString(UnifiedDiff(oldName, newName, old, cur))
	}
	return out.String(), nil
}
