// Package migrations embeds the schema migrations of both SQL dialects.
// Files are append-only and numbered identically in sqlite/ and postgres/;
// a test checks that both dialects list the same versions.
package migrations

import "embed"

// FS holds sqlite/*.sql and postgres/*.sql.
//
//go:embed sqlite/*.sql postgres/*.sql
var FS embed.FS
