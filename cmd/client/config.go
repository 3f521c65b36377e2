package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// configCmd is `teammem config`: teammem's own settings
// (<user config dir>/teammem/settings.json).
func (a *app) configCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show or change teammem's settings",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			on, from := a.sessionNotesUpload()
			fmt.Fprintf(a.stdout, "session-notes: %s (%s)\n", onOff(on), from)
			return nil
		},
	}
	cmd.AddCommand(a.configSessionNotesCmd())
	return cmd
}

// configSessionNotesCmd is `teammem config session-notes [on|off]`.
func (a *app) configSessionNotesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "session-notes [on|off]",
		Short: "Upload each session's session-memory notes to the server at its end (off by default)",
		Long: "When on, the SessionEnd hook uploads the ending session's session-memory notes\n" +
			"(<config home>/projects/<project>/<session>/session-memory/summary.md) for the repository,\n" +
			"where the team's server dreams can read them. The notes are scanned for secrets first and\n" +
			"not uploaded when they hold one, nor when they are over 64 KiB; the hook never fails for it\n" +
			"and logs what it did to hook.log. The setting is \"session_notes_upload\" in <user config dir>/teammem/settings.json;\n" +
			envSessionNotesUpload + " overrides it.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				on, from := a.sessionNotesUpload()
				fmt.Fprintf(a.stdout, "session-notes: %s (%s)\n", onOff(on), from)
				return nil
			}
			var on bool
			switch args[0] {
			case "on":
				on = true
			case "off":
			default:
				return &usageError{fmt.Errorf("session-notes %q: want on or off", args[0])}
			}
			if err := a.setSetting(sessionNotesKey, on); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "session-notes: %s\n", onOff(on))
			return nil
		},
	}
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
