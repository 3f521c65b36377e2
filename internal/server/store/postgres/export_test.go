package postgres

// PauseScrubs holds back the table rewrites that erasures ask for, for
// tests that need the tables as they are.
func PauseScrubs(db *DB) { db.scrubs.paused.Store(true) }
