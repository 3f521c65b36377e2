package httpapi

import (
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// Scanner is secretscan.OrgScanner: the shared scanner as the domain's
// SecretScanner, each org's allowlist applied.
type Scanner = secretscan.OrgScanner

// NewScanner is secretscan.NewOrgScanner.
func NewScanner(sc *secretscan.Scanner) *Scanner { return secretscan.NewOrgScanner(sc) }

// NewScannerAsync is secretscan.NewOrgScannerAsync.
func NewScannerAsync(build func() (*secretscan.Scanner, error)) *Scanner {
	return secretscan.NewOrgScannerAsync(build)
}

// refuseSecret is teammem.RefuseSecret with the server's scanner.
func (s *Server) refuseSecret(org teammem.Org, field, value string) error {
	return teammem.RefuseSecret(s.writer.Scanner, org, field, value)
}
