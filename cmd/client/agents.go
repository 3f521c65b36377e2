package main

import "github.com/spf13/cobra"

// agentsCmd is being built; see the issue for the agents command.
func (a *app) agentsCmd() *cobra.Command {
	return &cobra.Command{Use: "agents", Short: "(not built yet)", Hidden: true}
}
