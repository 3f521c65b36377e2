package httpapi

import (
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// secretFields spells, for error messages, the fields RefuseSecret checks;
// the error's details name them by these keys.
var secretFields = map[string]string{
	"name":   "the key name",
	"repo":   "the repo slug",
	"client": "the client name (the X-Teammem-Client header, else User-Agent)",
}

// RefuseSecret returns an invalid error when value, something the server
// stores and shows besides entry content (a key name, a repo slug, a client
// name: field is one of "name", "repo", "client"), holds a secret as sc
// finds them for org, and nil otherwise or when sc is nil. The entry scan
// never reads these values, yet they are listed to admins, kept in every
// version's history and written to the audit log, so a token pasted into
// one would be shared as surely as one in an entry. The error names the
// field and the rule, never the value. teammem-server admin create-key
// refuses key names with it too.
func RefuseSecret(sc teammem.SecretScanner, org teammem.Org, field, value string) error {
	if sc == nil || value == "" {
		return nil
	}
	found := sc.ScanEntry(org, field, teammem.NameScanText(value))
	if len(found) == 0 {
		return nil
	}
	f := found[0]
	if f.RuleID == secretscan.RuleScannerUnavailable {
		// Not the caller's fault, and nothing unscanned is stored either.
		return teammem.Errorf(teammem.EUnavailable, "the secret scanner is unavailable, so %s cannot be checked", secretFields[field])
	}
	return teammem.Errorf(teammem.EInvalid, "%s holds what looks like a secret (%s); use one without it", secretFields[field], f.Label).
		WithDetails(map[string]any{"field": field, "rule_id": f.RuleID, "label": f.Label})
}

// refuseSecret is RefuseSecret with the server's scanner.
func (s *Server) refuseSecret(org teammem.Org, field, value string) error {
	return RefuseSecret(s.writer.Scanner, org, field, value)
}

// refuseWriteSecrets refuses a write whose client name holds a secret, or
// whose repo slug does when the write would create the repo: the one is
// stored with every entry version written, the other names the repo for
// good. An existing repo was checked when it was created. A refused client
// name fails the write rather than being replaced, so that a client sending
// one learns it at once.
func (s *Server) refuseWriteSecrets(sr *spaceReq, clientID string) error {
	if sr.repo.ID == 0 {
		if err := s.refuseSecret(sr.p.Org, "repo", sr.slug); err != nil {
			return err
		}
	}
	return s.refuseSecret(sr.p.Org, "client", clientID)
}
