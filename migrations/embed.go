// Package migrations embeds the schema migrations of both SQL dialects.
// Files are append-only and numbered identically in sqlite/ and postgres/;
// parity_test.go checks that both dialects list the same versions and that,
// run to the latest, they leave the same tables, columns, indexes and
// constraints.
package migrations

import "embed"

// FS holds sqlite/*.sql and postgres/*.sql.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
