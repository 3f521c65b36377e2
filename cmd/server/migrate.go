package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/teammem"
)

// migrateCmd is `teammem-server migrate`: opening the store applies its
// pending migrations, so there is nothing left to do but say so.
func migrateCmd(cfg *Config, stdout, stderr io.Writer) *cobra.Command {
	r := &storeRunner{cfg: cfg, stdout: stdout, stderr: stderr}
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations and exit",
		Args:  cobra.NoArgs,
		RunE: r.run(func(cmd *cobra.Command, st teammem.Store) error {
			fmt.Fprintln(stdout, "database is migrated")
			return nil
		}),
	}
	r.createFlag(cmd.Flags())
	return cmd
}
