package main

import (
	"context"
	"fmt"
	"io"

	"github.com/teammem/teammem/internal/teammem"
)

// bootstrap gives an empty database org "default" with owner "admin" and a
// key: TEAMMEM_BOOTSTRAP_KEY when set, else a generated one printed once to
// stderr. A replica that loses the race to another one's bootstrap moves on.
func bootstrap(ctx context.Context, st teammem.Store, key string, stderr io.Writer) error {
	n, err := st.OrgCount(ctx)
	if err != nil || n > 0 {
		return err
	}
	org, err := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "default", Name: "Default"})
	if teammem.ErrorCode(err) == teammem.EConflict {
		return nil
	}
	if err != nil {
		return fmt.Errorf("bootstrap org: %w", err)
	}
	user, err := st.UserCreate(ctx, org.ID, teammem.UserCreateParams{Handle: "admin", Role: teammem.RoleOwner})
	if err != nil {
		return fmt.Errorf("bootstrap user: %w", err)
	}
	generated := key == ""
	prefix := teammem.KeyPrefix(key)
	if generated {
		key, prefix = teammem.NewKeyString()
	}
	if _, err := st.KeyCreate(ctx, org.ID, teammem.KeyCreateParams{UserID: user.ID, Name: "bootstrap", Prefix: prefix, Hash: teammem.HashKey(key)}); err != nil {
		return fmt.Errorf("bootstrap key: %w", err)
	}
	if generated {
		fmt.Fprintf(stderr, "\nCreated org \"default\" with owner \"admin\". Its API key, shown only this once:\n\n    %s\n\n", key)
	}
	return nil
}
