package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/teammem/teammem/internal/server/store"
	"github.com/teammem/teammem/internal/teammem"
)

// rootCmd builds the command tree. Without a subcommand it serves.
func rootCmd(getenv func(string) string, stdout, stderr io.Writer) *cobra.Command {
	cfg := defaultConfig()
	envErr := cfg.loadEnv(getenv)
	root := &cobra.Command{
		Use:   "teammem-server",
		Short: "Serve teammem: team memory sync for AI coding agents",
		Long: "teammem-server serves the Claude Code compatible team memory API and the /v1 API.\n" +
			"Settings come from TEAMMEM_* environment variables, overridden by flags.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if envErr != nil {
				return envErr
			}
			return cfg.validate()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			m := &Main{Config: cfg, Log: newLogger(cfg, stderr), Stderr: stderr}
			defer m.Close()
			if err := m.Open(cmd.Context()); err != nil {
				return err
			}
			return m.Run(cmd.Context())
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	cfg.bindFlags(root.PersistentFlags())
	root.AddCommand(migrateCmd(&cfg, stdout, stderr), adminCmd(&cfg, stdout, stderr), fsckCmd(&cfg, stdout, stderr))
	return root
}

// openStore opens the configured database for a subcommand, first saying
// on stderr which one it is. A SQLite file that does not exist is refused
// unless create is set: run from another directory, the default relative
// path would make a new, empty database there, and an admin command would
// print a key that no running server knows.
func openStore(ctx context.Context, cfg *Config, create bool, stderr io.Writer) (teammem.Store, error) {
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
	fmt.Fprintf(stderr, "database: %s\n", where)
	if driver == "sqlite" && !create {
		if _, err := os.Stat(target); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("there is no database at %s: run where the server runs, or name its database with TEAMMEM_DATABASE_URL (--database-url); --create makes a new, empty one", target)
		}
	}
	return store.Open(ctx, cfg.DatabaseURL)
}

// createFlag registers --create, which lets a subcommand make a new SQLite
// database instead of refusing to.
func createFlag(fs *pflag.FlagSet, create *bool) {
	fs.BoolVar(create, "create", false, "create the SQLite database if it does not exist (Postgres: no effect)")
}

func migrateCmd(cfg *Config, stdout, stderr io.Writer) *cobra.Command {
	var create bool
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply pending database migrations and exit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd.Context(), cfg, create, stderr)
			if err != nil {
				return err
			}
			defer st.Close()
			fmt.Fprintln(stdout, "database is migrated")
			return nil
		},
	}
	createFlag(cmd.Flags(), &create)
	return cmd
}

func fsckCmd(cfg *Config, stdout, stderr io.Writer) *cobra.Command {
	var create bool
	cmd := &cobra.Command{
		Use:   "fsck",
		Short: "Recompute every space's checksum and counts from its entries; exit non-zero on any mismatch",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd.Context(), cfg, create, stderr)
			if err != nil {
				return err
			}
			defer st.Close()
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
		},
	}
	createFlag(cmd.Flags(), &create)
	return cmd
}

func adminCmd(cfg *Config, stdout, stderr io.Writer) *cobra.Command {
	admin := &cobra.Command{Use: "admin", Short: "Manage orgs, users and keys directly in the configured database"}
	var create bool
	createFlag(admin.PersistentFlags(), &create)
	withStore := func(run func(cmd *cobra.Command, st teammem.Store) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			st, err := openStore(cmd.Context(), cfg, create, stderr)
			if err != nil {
				return err
			}
			defer st.Close()
			return run(cmd, st)
		}
	}

	var slug, name string
	createOrg := &cobra.Command{
		Use:   "create-org",
		Short: "Create an org with an owner user \"admin\" and print the owner's key once",
		Args:  cobra.NoArgs,
		RunE: withStore(func(cmd *cobra.Command, st teammem.Store) error {
			if err := teammem.ValidateOrgSlug(slug); err != nil {
				return err
			}
			if name == "" {
				name = slug
			}
			org, err := st.OrgCreate(cmd.Context(), teammem.OrgCreateParams{Slug: slug, Name: name})
			if teammem.ErrorCode(err) == teammem.EConflict {
				return teammem.Errorf(teammem.EConflict, "org %q already exists", slug)
			} else if err != nil {
				return fmt.Errorf("create org %q: %w", slug, err)
			}
			user, err := st.UserCreate(cmd.Context(), org.ID, teammem.UserCreateParams{Handle: "admin", Role: teammem.RoleOwner})
			if err != nil {
				return err
			}
			key, err := newKey(cmd, st, org, user, "owner", false, nil)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "created org %q with owner \"admin\"; key (shown once):\n%s\n", slug, key)
			return nil
		}),
	}
	createOrg.Flags().StringVar(&slug, "slug", "", "org slug (lowercase letters, digits, hyphens)")
	createOrg.Flags().StringVar(&name, "name", "", "display name (defaults to the slug)")
	_ = createOrg.MarkFlagRequired("slug")

	var orgSlug, handle, role string
	createUser := &cobra.Command{
		Use:   "create-user",
		Short: "Create a user in an org",
		Args:  cobra.NoArgs,
		RunE: withStore(func(cmd *cobra.Command, st teammem.Store) error {
			if err := teammem.ValidateHandle(handle); err != nil {
				return err
			}
			if !teammem.Role(role).Valid() {
				return fmt.Errorf("--role %q: want owner, admin, member or viewer", role)
			}
			org, err := st.OrgGetBySlug(cmd.Context(), orgSlug)
			if err != nil {
				return fmt.Errorf("org %q: %w", orgSlug, err)
			}
			_, err = st.UserCreate(cmd.Context(), org.ID, teammem.UserCreateParams{Handle: handle, Role: teammem.Role(role)})
			if teammem.ErrorCode(err) == teammem.EConflict {
				return teammem.Errorf(teammem.EConflict, "user %q already exists in org %q", handle, orgSlug)
			} else if err != nil {
				return fmt.Errorf("create user %q: %w", handle, err)
			}
			fmt.Fprintf(stdout, "created user %q (%s) in org %q\n", handle, role, orgSlug)
			return nil
		}),
	}
	createUser.Flags().StringVar(&orgSlug, "org", "default", "org slug")
	createUser.Flags().StringVar(&handle, "handle", "", "user handle")
	createUser.Flags().StringVar(&role, "role", "member", "owner, admin, member or viewer")
	_ = createUser.MarkFlagRequired("handle")

	var keyOrg, keyUser, keyName string
	var readOnly bool
	var expiresIn time.Duration
	createKey := &cobra.Command{
		Use:   "create-key",
		Short: "Create an API key for a user and print it once",
		Args:  cobra.NoArgs,
		RunE: withStore(func(cmd *cobra.Command, st teammem.Store) error {
			org, err := st.OrgGetBySlug(cmd.Context(), keyOrg)
			if err != nil {
				return fmt.Errorf("org %q: %w", keyOrg, err)
			}
			user, err := st.UserGetByHandle(cmd.Context(), org.ID, keyUser)
			if err != nil {
				return fmt.Errorf("user %q: %w", keyUser, err)
			}
			if err := refuseSecretKeyName(org, keyName); err != nil {
				return err
			}
			var expires *time.Time
			if expiresIn > 0 {
				t := time.Now().Add(expiresIn).UTC()
				expires = &t
			}
			key, err := newKey(cmd, st, org, user, keyName, readOnly, expires)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, key)
			return nil
		}),
	}
	createKey.Flags().StringVar(&keyOrg, "org", "default", "org slug")
	createKey.Flags().StringVar(&keyUser, "user", "", "user handle")
	createKey.Flags().StringVar(&keyName, "name", "cli", "key name")
	createKey.Flags().BoolVar(&readOnly, "read-only", false, "the key may only read")
	createKey.Flags().DurationVar(&expiresIn, "expires-in", 0, "expire the key after this long (e.g. 720h); 0 never")
	_ = createKey.MarkFlagRequired("user")

	admin.AddCommand(createOrg, createUser, createKey, loginLinkCmd(withStore, stdout))
	return admin
}

// newKey creates a key for user and records it in the audit log.
func newKey(cmd *cobra.Command, st teammem.Store, org teammem.Org, user teammem.User, name string, readOnly bool, expires *time.Time) (string, error) {
	key, prefix := teammem.NewKeyString()
	k, err := st.KeyCreate(cmd.Context(), org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: name, Prefix: prefix,
		Hash: teammem.HashKey(key), ReadOnly: readOnly, ExpiresAt: expires})
	if err != nil {
		return "", fmt.Errorf("create key: %w", err)
	}
	_ = st.AuditAppend(cmd.Context(), org.ID, teammem.AuditEvent{Action: "key.create", Target: k.ID,
		Details: map[string]any{"user": user.Handle, "via": "teammem-server admin"}})
	return key, nil
}
