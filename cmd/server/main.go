// Command teammem-server runs the teammem API: Claude Code compatible team
// memory sync plus the native /v1 API, on SQLite or Postgres.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := rootCmd(os.Getenv, os.Stdout, os.Stderr).ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "teammem-server:", err)
		os.Exit(1)
	}
}
