package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/server/store"
	"github.com/teammem/teammem/internal/teammem"
)

// openStore opens the configured database, the one way every command
// (serve, migrate, fsck, admin) does. With notice set it first says there
// which database it is; the server says so in its start-up log instead. A
// SQLite file that does not exist is refused unless create is set: run from
// another directory, the default relative path would make a new, empty
// database there, and an admin command would print a key that no running
// server knows.
func openStore(ctx context.Context, cfg *Config, create bool, notice io.Writer) (teammem.Store, error) {
	driver, target, err := store.Parse(cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("TEAMMEM_DATABASE_URL: %w", err)
	}
	where := store.Redact(cfg.DatabaseURL)
	if driver == "sqlite" {
		if abs, err := filepath.Abs(target); err == nil {
			target = abs
			where += " (" + abs + ")"
		}
	}
	if notice != nil {
		fmt.Fprintf(notice, "database: %s\n", where)
	}
	if driver == "sqlite" && !create {
		if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("there is no database at %s: run where the server runs, or name its database with TEAMMEM_DATABASE_URL (--database-url); --create makes a new, empty one", target)
		}
	}
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	// River's tables (the job queue) migrate with ours, wherever ours do.
	if err := jobs.Migrate(ctx, st); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// storeRunner runs subcommands against the configured database: it opens
// the store before a subcommand runs and closes it after.
type storeRunner struct {
	cfg            *Config
	create         bool // --create
	stdout, stderr io.Writer
}

// createFlag registers --create on fs, which lets the subcommands make a
// new SQLite database instead of refusing to.
func (r *storeRunner) createFlag(fs *pflag.FlagSet) {
	fs.BoolVar(&r.create, "create", false, "create the SQLite database if it does not exist (Postgres: no effect)")
}

// run returns a cobra RunE that opens the store, hands it to fn and closes
// it when fn returns.
func (r *storeRunner) run(fn func(cmd *cobra.Command, st teammem.Store) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		st, err := openStore(cmd.Context(), r.cfg, r.create, r.stderr)
		if err != nil {
			return err
		}
		defer st.Close()
		return fn(cmd, st)
	}
}

// command is a top-level subcommand that takes no arguments, runs fn on the
// opened store and has a --create of its own.
func (r *storeRunner) command(use, short string, fn func(cmd *cobra.Command, st teammem.Store) error) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs, RunE: r.run(fn)}
	r.createFlag(cmd.Flags())
	return cmd
}
