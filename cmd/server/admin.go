package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/teammem"
)

// adminCmd is `teammem-server admin`, the parent of the subcommands that
// manage orgs, users and keys straight in the database, one file each
// (admin_*.go). Its --create reaches every one of them.
func adminCmd(r *storeRunner) *cobra.Command {
	admin := &cobra.Command{Use: "admin", Short: "Manage orgs, users and keys directly in the configured database"}
	r.createFlag(admin.PersistentFlags())
	admin.AddCommand(adminCreateOrgCmd(r), adminCreateUserCmd(r), adminCreateKeyCmd(r), adminLoginLinkCmd(r))
	return admin
}

// newKey creates a key for user and records it in the audit log.
func newKey(cmd *cobra.Command, st teammem.Store, org teammem.Org, user teammem.User, name string, readOnly bool, expires *time.Time) (string, error) {
	key, prefix := teammem.NewKeyString()
	k, err := st.KeyCreate(cmd.Context(), org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: name, Prefix: prefix,
		Hash: teammem.HashKey(key), ReadOnly: readOnly, ExpiresAt: expires})
	if err != nil {
		return "", fmt.Errorf("create key: %w", err)
	}
	auditKeyCreate(cmd.Context(), st, org.ID, k.ID, user.Handle)
	return key, nil
}

// auditKeyCreate records in the org's audit log that the admin command
// made a key for handle. The key exists whether or not this lands, so a
// failure here fails nothing.
func auditKeyCreate(ctx context.Context, st teammem.Store, orgID int64, keyID, handle string) {
	_ = st.AuditAppend(ctx, orgID, teammem.AuditEvent{Action: "key.create", Target: keyID,
		Details: map[string]any{"user": handle, "via": "teammem-server admin"}})
}
