package main

import "github.com/spf13/cobra"

// extractCmd is being built; see the issue for the extract command.
func (a *app) extractCmd() *cobra.Command {
	return &cobra.Command{Use: "extract", Short: "(not built yet)", Hidden: true}
}
