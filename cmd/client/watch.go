package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	memsync "github.com/teammem/teammem/internal/client/memsync"
	"github.com/teammem/teammem/internal/teammem"
)

func (a *app) watchCmd() *cobra.Command {
	var debounce, maxWait, poll time.Duration
	var allowMassDelete bool
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Sync continuously: push 2 s after local changes, pull on server events",
		Long: "watch syncs once, then watches the memory directory: local changes are pushed 2 s after the\n" +
			"last one, or 10 debounces after the first of a stream of changes that never pauses; the\n" +
			"server's live events trigger pulls (every minute while the stream is down).\n" +
			"After a permanent failure (e.g. too many entries) pushes pause until a file is deleted or\n" +
			"watch restarts; `teammem status` shows it. Ctrl-C pushes pending changes, then exits.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := a.newSyncEnv()
			if err != nil {
				return err
			}
			env.engine.AllowMassDelete = allowMassDelete
			tel := a.newTelemetry(env.engine.Client)
			defer tel.flush(context.WithoutCancel(cmd.Context()))
			lastFlush := time.Now()
			w := &memsync.Watcher{Engine: env.engine, Debounce: debounce, MaxWait: maxWait, Poll: poll,
				Log: func(format string, args ...any) {
					fmt.Fprintf(a.stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
				},
				OnSync: func(rep *memsync.Report, pushed bool, d time.Duration, err error) {
					tel.syncEvents(rep, true, pushed, d, err)
					if time.Since(lastFlush) > 30*time.Second { // batches, not a request per sync
						lastFlush = time.Now()
						go tel.flush(context.WithoutCancel(cmd.Context()))
					}
				},
				OnSuppress: func(scope teammem.Scope, reason string, status int) {
					tel.add("tengu_team_mem_push_suppressed", map[string]any{"reason": reason, "status": status})
				}}
			fmt.Fprintf(a.stderr, "teammem: syncing %s with %s (%s)\n", env.loc.MemoryDir, env.engine.Client.BaseURL, env.repo)
			return w.Run(cmd.Context())
		},
	}
	cmd.Flags().DurationVar(&debounce, "debounce", 2*time.Second, "quiet time after the last local change before pushing")
	cmd.Flags().DurationVar(&maxWait, "max-wait", 0, "longest a stream of changes may hold back a push (default 10 × --debounce)")
	cmd.Flags().DurationVar(&poll, "poll", time.Minute, "pull interval while the live event stream is down")
	cmd.Flags().BoolVar(&allowMassDelete, "allow-mass-delete", false, massDeleteUsage)
	return cmd
}
