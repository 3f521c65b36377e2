package main

import "github.com/spf13/cobra"

// dreamCmd is being built; see the issue for the dream command.
func (a *app) dreamCmd() *cobra.Command {
	return &cobra.Command{Use: "dream", Short: "(not built yet)", Hidden: true}
}
