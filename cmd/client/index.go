package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/teammem"
)

func (a *app) indexCmd() *cobra.Command {
	var lint, team bool
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Print MEMORY.md as Claude Code loads it, or lint the directory with --lint",
		Long: "index prints the memory directory's MEMORY.md truncated exactly as Claude Code loads it\n" +
			"(200 lines, then 25 000 characters), or an index rendered from the topic files' frontmatter\n" +
			"when there is none. --team does the same for team/. --lint reports an over-limit index,\n" +
			"long lines, links to missing files, topic files missing from the index, bad frontmatter and\n" +
			"duplicate names, and exits 3 when it finds any. A memory directory that does not exist is a\n" +
			"failure (exit 1), not an empty result.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			loc, err := a.existingLocation()
			if err != nil {
				return err
			}
			if lint {
				return a.lint(loc)
			}
			root, exclude := loc.MemoryDir, []string{"team"}
			if team {
				root, exclude = loc.TeamDir, nil
				if err := mustExist(root); err != nil {
					return err
				}
			}
			idx, has, topics, err := readIndexDir(root, exclude)
			if err != nil {
				return err
			}
			if !has {
				idx = teammem.RenderIndex(topics)
			}
			tr := teammem.TruncateIndex(idx)
			if a.jsonOut {
				return a.printJSON(map[string]any{"dir": root, "rendered": !has, "content": tr.Content, "lines": tr.LineCount,
					"chars": tr.ByteCount, "lines_truncated": tr.LinesTruncated, "chars_truncated": tr.BytesTruncated})
			}
			fmt.Fprintln(a.stdout, tr.Content)
			return nil
		},
	}
	cmd.Flags().BoolVar(&lint, "lint", false, "report problems instead of printing; exit 3 when there are any")
	cmd.Flags().BoolVar(&team, "team", false, "print team/MEMORY.md instead of the personal one")
	return cmd
}

// readIndexDir reads a directory's MEMORY.md and its files.
func readIndexDir(root string, exclude []string) (index string, has bool, files []teammem.TopicFile, err error) {
	scanned, _, err := memdir.Scan(root, memdir.ScanOptions{Exclude: exclude})
	if err != nil {
		return "", false, nil, err
	}
	for _, f := range scanned {
		if f.Key == teammem.IndexName {
			index, has = string(f.Content), true
		}
		files = append(files, teammem.TopicFile{Key: f.Key, Content: string(f.Content)})
	}
	return index, has, files, nil
}

func (a *app) lint(loc memdir.Location) error {
	type dirReport struct {
		Dir      string                `json:"dir"`
		Problems []teammem.LintProblem `json:"problems"`
	}
	var reports []dirReport
	total := 0
	for _, d := range []struct {
		root    string
		exclude []string
	}{{loc.MemoryDir, []string{"team"}}, {loc.TeamDir, nil}} {
		idx, has, files, err := readIndexDir(d.root, d.exclude)
		if err != nil {
			return err
		}
		if !has && len(files) == 0 {
			continue
		}
		p := teammem.LintIndex(idx, has, files)
		total += len(p)
		reports = append(reports, dirReport{Dir: d.root, Problems: nonNilSlice(p)})
	}
	if a.jsonOut {
		if err := a.printJSON(map[string]any{"dirs": nonNilSlice(reports), "problems": total}); err != nil {
			return err
		}
	} else {
		for _, r := range reports {
			for _, p := range r.Problems {
				where := filepath.Join(r.Dir, p.Key)
				if p.Line > 0 {
					where = fmt.Sprintf("%s:%d", where, p.Line)
				}
				fmt.Fprintf(a.stdout, "%s: %s: %s\n", where, p.Kind, p.Message)
			}
		}
		fmt.Fprintf(a.stdout, "%d problems\n", total)
	}
	if total > 0 {
		return &findingsError{fmt.Sprintf("%d index problems", total)}
	}
	return nil
}
