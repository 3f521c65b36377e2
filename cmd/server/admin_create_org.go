package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/teammem"
)

// adminCreateOrgCmd is `teammem-server admin create-org`.
func adminCreateOrgCmd(r *storeRunner) *cobra.Command {
	var slug, name string
	cmd := &cobra.Command{
		Use:   "create-org",
		Short: "Create an org with an owner user \"admin\" and print the owner's key once",
		Args:  cobra.NoArgs,
		RunE: r.run(func(cmd *cobra.Command, st teammem.Store) error {
			return runCreateOrg(cmd, st, r.stdout, slug, name)
		}),
	}
	cmd.Flags().StringVar(&slug, "slug", "", "org slug (lowercase letters, digits, hyphens)")
	cmd.Flags().StringVar(&name, "name", "", "display name (defaults to the slug)")
	_ = cmd.MarkFlagRequired("slug")
	return cmd
}

// runCreateOrg creates the org with its owner and key in one transaction,
// as bootstrap and POST /v1/admin/orgs do, so a failure leaves neither an
// org nobody can get into nor a stray user or key.
func runCreateOrg(cmd *cobra.Command, st teammem.Store, stdout io.Writer, slug, name string) error {
	ctx := cmd.Context()
	org, key, err := teammem.CreateOrgWithOwner(ctx, st, teammem.NewOrg{Slug: slug, Name: name, KeyName: "owner"})
	switch code := teammem.ErrorCode(err); {
	case code == teammem.EInvalid || code == teammem.EConflict:
		return err // the message names the slug already
	case err != nil:
		return fmt.Errorf("create org %q: %w", slug, err)
	}
	// The audit log names the key by id, which only the store knows.
	if p, err := st.KeyLookup(ctx, teammem.HashKey(key)); err == nil {
		auditKeyCreate(ctx, st, org.ID, p.Key.ID, p.User.Handle)
	}
	fmt.Fprintf(stdout, "created org %q with owner \"admin\"; key (shown once):\n%s\n", slug, key)
	return nil
}
