package main

import "github.com/spf13/cobra"

// hookCmd is being built; see the issue for the hook command.
func (a *app) hookCmd() *cobra.Command {
	return &cobra.Command{Use: "hook", Short: "(not built yet)", Hidden: true}
}
