package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/teammem"
)

// adminCreateKeyCmd is `teammem-server admin create-key`.
func adminCreateKeyCmd(r *storeRunner) *cobra.Command {
	var orgSlug, handle, name string
	var readOnly bool
	var expiresIn time.Duration
	cmd := &cobra.Command{
		Use:   "create-key",
		Short: "Create an API key for a user and print it once",
		Args:  cobra.NoArgs,
		RunE: r.run(func(cmd *cobra.Command, st teammem.Store) error {
			org, err := st.OrgGetBySlug(cmd.Context(), orgSlug)
			if err != nil {
				return fmt.Errorf("org %q: %w", orgSlug, err)
			}
			user, err := st.UserGetByHandle(cmd.Context(), org.ID, handle)
			if err != nil {
				return fmt.Errorf("user %q: %w", handle, err)
			}
			if err := refuseSecretKeyName(org, name); err != nil {
				return err
			}
			var expires *time.Time
			if expiresIn > 0 {
				t := time.Now().Add(expiresIn).UTC()
				expires = &t
			}
			key, err := newKey(cmd, st, org, user, name, readOnly, expires)
			if err != nil {
				return err
			}
			fmt.Fprintln(r.stdout, key)
			return nil
		}),
	}
	cmd.Flags().StringVar(&orgSlug, "org", "default", "org slug")
	cmd.Flags().StringVar(&handle, "user", "", "user handle")
	cmd.Flags().StringVar(&name, "name", "cli", "key name")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "the key may only read")
	cmd.Flags().DurationVar(&expiresIn, "expires-in", 0, "expire the key after this long (e.g. 720h); 0 never")
	_ = cmd.MarkFlagRequired("user")
	return cmd
}
