package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/teammem"
)

// adminCreateUserCmd is `teammem-server admin create-user`.
func adminCreateUserCmd(r *storeRunner) *cobra.Command {
	var orgSlug, handle, role string
	cmd := &cobra.Command{
		Use:   "create-user",
		Short: "Create a user in an org",
		Args:  cobra.NoArgs,
		RunE: r.run(func(cmd *cobra.Command, st teammem.Store) error {
			if err := teammem.ValidateHandle(handle); err != nil {
				return err
			}
			if !teammem.Role(role).Valid() {
				return fmt.Errorf("--role %q: want owner, admin, member or viewer", role)
			}
			org, err := st.OrgGetBySlug(cmd.Context(), orgSlug)
			if err != nil {
				return fmt.Errorf("org %q: %w", orgSlug, err)
			}
			_, err = st.UserCreate(cmd.Context(), org.ID, teammem.UserCreateParams{Handle: handle, Role: teammem.Role(role)})
			if teammem.ErrorCode(err) == teammem.EConflict {
				return teammem.Errorf(teammem.EConflict, "user %q already exists in org %q", handle, orgSlug)
			} else if err != nil {
				return fmt.Errorf("create user %q: %w", handle, err)
			}
			fmt.Fprintf(r.stdout, "created user %q (%s) in org %q\n", handle, role, orgSlug)
			return nil
		}),
	}
	cmd.Flags().StringVar(&orgSlug, "org", "default", "org slug")
	cmd.Flags().StringVar(&handle, "handle", "", "user handle")
	cmd.Flags().StringVar(&role, "role", "member", "owner, admin, member or viewer")
	_ = cmd.MarkFlagRequired("handle")
	return cmd
}
