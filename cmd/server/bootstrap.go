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
	generated := key == ""
	// One transaction: a crash half way must not leave an org that stops
	// the next start from bootstrapping but has no key to get in with.
	_, key, err = teammem.CreateOrgWithOwner(ctx, st, teammem.NewOrg{Slug: "default", Name: "Default", KeyName: "bootstrap", Key: key})
	if teammem.ErrorCode(err) == teammem.EConflict {
		return nil // another replica bootstrapped first
	}
	if err != nil {
		return fmt.Errorf("bootstrap org: %w", err)
	}
	if generated {
		fmt.Fprintf(stderr, "\nCreated org \"default\" with owner \"admin\". Its API key, shown only this once:\n\n    %s\n\n", key)
	}
	return nil
}
