package teammem

// The page sizes of a store's list calls (AuditFilter, ProposalFilter).
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// ListLimit is the page size a store reads for a filter's Limit: the limit
// itself, or DefaultListLimit when it is unset or beyond MaxListLimit. A
// limit out of range falls back to the default rather than to the cap, so
// that a mistaken huge limit costs no more than a forgotten one.
func ListLimit(limit int) int {
	if limit <= 0 || limit > MaxListLimit {
		return DefaultListLimit
	}
	return limit
}
