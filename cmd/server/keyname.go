package main

import (
	"fmt"

	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// refuseSecretKeyName fails when a key name holds a secret, as POST
// /v1/org/keys does: key names are listed to admins and written to the
// audit log, whichever way the key was made.
func refuseSecretKeyName(org teammem.Org, name string) error {
	sc, err := secretscan.New()
	if err != nil {
		return fmt.Errorf("scan the key name: %w", err)
	}
	return teammem.RefuseSecret(secretscan.NewOrgScanner(sc), org, "name", name)
}
