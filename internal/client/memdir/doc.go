// Package memdir is the teammem client's view of the disk: where a project's
// memory lives (Claude Code's layout under the config home, its overrides,
// the canonical git root that worktrees share, and the overrides a
// repository is not allowed to make), which repository it belongs to (the
// repo slug from the origin remote), which of its directories Claude Code's
// own memory-store sync owns, and every file operation the sync engine and
// the background agents perform inside it.
//
// Every key that comes from a server goes through Target before anything
// touches the disk: the string rules of teammem.ValidateKey, lexical
// containment, and symlink containment (no dangling symlinks, no loops, no
// real path outside the root). Writes are atomic (a temp file in the same
// directory, fsync, rename) and never follow a symlink at the final path.
//
// The directories Resolve returns are absolute, cleaned, NFC-normalised and
// carry no trailing separator; Claude Code's own strings for the same
// directories end with one. Keys are always '/'-separated paths relative to
// a root, as on the wire.
package memdir
