// Package teammem holds teammem's domain: the types every other package
// speaks (orgs, users, API keys, repos, spaces, entries), the rules that
// decide what a write may do (key validation, checksums, caps, secret policy,
// tombstones), the closed set of error codes, MEMORY.md truncation and index
// rendering, and the Store interface the database drivers implement.
//
// It performs no I/O and imports no database, HTTP or scanner package; a test
// enforces that. Adapters live around it: internal/server/store drivers below the
// Store interface, internal/server/httpapi and cmd/* above it.
package teammem
