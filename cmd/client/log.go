package main

import "github.com/spf13/cobra"

// logCmd is being built; see the issue for the log command.
func (a *app) logCmd() *cobra.Command {
	return &cobra.Command{Use: "log", Short: "(not built yet)", Hidden: true}
}
