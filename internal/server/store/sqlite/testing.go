package sqlite

import "context"

// ExecForTest runs a statement on the writer connection, so tests can
// corrupt a database on purpose (fsck). Not for production use.
func ExecForTest(db *DB, query string, args ...any) error {
	return db.writing(context.Background(), 0, func() error {
		_, err := db.w.Exec(query, args...)
		return err
	})
}
