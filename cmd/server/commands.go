package main

import (
	"io"

	"github.com/spf13/cobra"
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
	// The subcommands share one runner: only one of them runs, and each
	// binds its own --create to the runner's flag.
	r := &storeRunner{cfg: &cfg, stdout: stdout, stderr: stderr}
	root.AddCommand(migrateCmd(r), adminCmd(r), fsckCmd(r), backupCmd(r), restoreCmd(r))
	return root
}
