package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/secretscan"
)

// scanFinding is one secret finding in a file: never the secret.
type scanFinding struct {
	Key string `json:"key"`
	secretscan.Finding
}

func (a *app) scanCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "scan",
		Short: "Scan the memory directory for secrets (exit 3 when any is found)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			loc, err := a.existingLocation()
			if err != nil {
				return err
			}
			sc, err := secretscan.New()
			if err != nil {
				return err
			}
			files, skipped, err := memdir.Scan(loc.MemoryDir, memdir.ScanOptions{MaxBytes: 1 << 30})
			if err != nil {
				return err
			}
			var findings []scanFinding
			for _, f := range files {
				for _, fd := range sc.Scan(string(f.Content), nil) {
					findings = append(findings, scanFinding{Key: f.Key, Finding: fd})
				}
			}
			if a.jsonOut {
				if err := a.printJSON(map[string]any{"memory_dir": loc.MemoryDir, "files": len(files), "findings": nonNilSlice(findings), "skipped": skipped}); err != nil {
					return err
				}
			} else {
				for _, f := range findings {
					fmt.Fprintf(a.stdout, "%s: %s\n", filepath.Join(loc.MemoryDir, f.Key), f.Finding)
				}
				for _, s := range skipped {
					fmt.Fprintf(a.stdout, "skipped %s: %s\n", s.Key, s.Reason)
				}
				fmt.Fprintf(a.stdout, "scanned %d files in %s: %d findings\n", len(files), loc.MemoryDir, len(findings))
			}
			if len(findings) > 0 {
				return &findingsError{fmt.Sprintf("%d secrets found; they are never uploaded, but remove them from memory files", len(findings))}
			}
			return nil
		},
	}
}

// existingLocation is the memory directory of a command that reads it
// (scan, index): one that does not exist fails (see mustExist).
func (a *app) existingLocation() (memdir.Location, error) {
	loc, err := a.location()
	if err != nil {
		return loc, err
	}
	return loc, mustExist(loc.MemoryDir)
}

// mustExist fails for a memory directory that is not there: scanning or
// linting nothing must not read as a clean result.
func mustExist(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("memory directory %s does not exist (nothing synced or written there yet; check --dir)", dir)
	case err != nil:
		return fmt.Errorf("memory directory: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("memory directory %s is not a directory", dir)
	}
	return nil
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
