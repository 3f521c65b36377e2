package teammem

import "strings"

// DreamInstructionsCheck scans a dream's instructions with the org's
// secret scanner before the dream is stored (the instructions live in its
// row and reach the model): ESecretDetected (details "rule_ids", the
// message naming the rules, never the secret) when sc finds a secret,
// EUnavailable when the scanner cannot tell. Empty instructions and a nil
// sc scan nothing.
func DreamInstructionsCheck(sc SecretScanner, org Org, instructions string) error {
	if sc == nil || instructions == "" {
		return nil
	}
	rules, err := secretRules(sc, org, "dream-instructions.md", instructions, "the instructions")
	if err != nil || len(rules) == 0 {
		return err
	}
	return Errorf(ESecretDetected, "instructions contain what looks like a secret (rules: %s); remove it, and rotate it if it is real; no dream was created",
		strings.Join(rules, ", ")).WithDetails(map[string]any{"rule_ids": rules})
}
