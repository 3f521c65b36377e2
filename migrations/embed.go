// Package migrations embeds the schema migrations of both SQL dialects.
// Files are append-only and numbered identically in sqlite/ and postgres/;
// parity_test.go checks that both dialects list the same versions and that,
// run to the latest, they leave the same tables, columns, indexes and
// constraints.
package migrations

import (
	"embed"
	"io/fs"
	"path"
	"strconv"
	"strings"
)

// FS holds sqlite/*.sql and postgres/*.sql.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS

// Latest is the newest schema version this binary's migrations reach (the
// same for both dialects: parity_test.go).
func Latest() int64 {
	names, _ := fs.Glob(FS, "sqlite/*.up.sql")
	var latest int64
	for _, n := range names {
		num, _, _ := strings.Cut(path.Base(n), "_")
		if v, err := strconv.ParseInt(num, 10, 64); err == nil && v > latest {
			latest = v
		}
	}
	return latest
}
