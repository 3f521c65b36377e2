package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/teammem"
)

// fsckCmd is `teammem-server fsck`.
func fsckCmd(r *storeRunner) *cobra.Command {
	return r.command("fsck", "Recompute every space's checksum and counts from its entries; exit non-zero on any mismatch",
		func(cmd *cobra.Command, st teammem.Store) error { return runFsck(cmd, st, r.stdout) })
}

// runFsck prints each problem fsck finds and a summary; any problem is an
// error, so the exit status tells a script.
func runFsck(cmd *cobra.Command, st teammem.Store, stdout io.Writer) error {
	rep, err := teammem.Fsck(cmd.Context(), st)
	if err != nil {
		return err
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(stdout, "space %d (org %d): %s\n", p.SpaceID, p.OrgID, p.Message)
	}
	fmt.Fprintf(stdout, "checked %d spaces and %d entries: %d problems\n", rep.Spaces, rep.Entries, len(rep.Problems))
	if len(rep.Problems) > 0 {
		return fmt.Errorf("fsck found %d problems", len(rep.Problems))
	}
	return nil
}
