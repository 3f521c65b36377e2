package memsync

import (
	"fmt"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/secretscan"
	"github.com/teammem/teammem/internal/teammem"
)

// SkipKind says why a file or entry was left out of a sync. The set is
// closed: output, telemetry and scripts branch on it, never on a message.
type SkipKind string

// The kinds of Skip. Local ones are files a push holds back (they stay on
// this machine); remote ones are entries a pull refused to write.
const (
	SkipTooLarge     SkipKind = "too_large"     // over the size cap (Limit): a local file, or an entry pulled
	SkipSymlink      SkipKind = "symlink"       // a local symlink: never followed, never synced
	SkipNotRegular   SkipKind = "not_regular"   // a local device, socket or pipe
	SkipUnreadable   SkipKind = "unreadable"    // a local file that could not be read (Detail says why)
	SkipInvalidName  SkipKind = "invalid_name"  // a local file whose name is not a valid key
	SkipSecret       SkipKind = "secret"        // the local scan found a secret (RuleID, Label, Line)
	SkipServerSecret SkipKind = "server_secret" // the server's scan refused it (RuleID, Label, Line)
	SkipPoisoning    SkipKind = "poisoning"     // the server's poisoning checks refused it (RuleID, Label, Line)
	SkipRefusedKey   SkipKind = "refused_key"   // a key from the server that may not be written here (Detail)
	SkipWriteFailed  SkipKind = "write_failed"  // a pulled entry that could not be written (Detail)
	SkipNoContent    SkipKind = "no_content"    // the server sent an upsert without content
	// SkipHeldForReview is a file the server holds as a proposal for an
	// admin's review (Detail names it): kept local, not sent again.
	SkipHeldForReview SkipKind = "held_for_review"
	// SkipStaleCopy is a local file the server refused as a stale copy:
	// exactly the content a deletion this machine never saw removed. It
	// stays here (a push never deletes), reported on every push until it
	// changes or goes.
	SkipStaleCopy SkipKind = "stale_copy"
	// SkipLeftAlone is a synced file inside a directory another sync owns
	// (Claude Code's own memory stores): neither read nor written; Detail
	// says which directory and why.
	SkipLeftAlone SkipKind = "left_alone"
)

// Skip is one file or entry left out of a sync, and why, as values.
type Skip struct {
	Key  string   `json:"key"`
	Kind SkipKind `json:"kind"`
	// RuleID, Label and Line describe a secret or poisoning finding (never
	// the secret, nor an excerpt).
	RuleID string `json:"rule_id,omitempty"`
	Label  string `json:"label,omitempty"`
	Line   int    `json:"line,omitempty"`
	// Limit is the size cap a SkipTooLarge file or entry exceeded.
	Limit int64 `json:"limit,omitempty"`
	// Detail is the underlying error of SkipUnreadable, SkipRefusedKey and
	// SkipWriteFailed, for people.
	Detail string `json:"detail,omitempty"`
}

// Message says in words why the file was left out, for output and logs.
func (s Skip) Message() string {
	switch s.Kind {
	case SkipTooLarge:
		return fmt.Sprintf("larger than %d bytes", s.Limit)
	case SkipSymlink:
		return "a symlink (never followed)"
	case SkipNotRegular:
		return "not a regular file"
	case SkipUnreadable:
		return "unreadable: " + s.Detail
	case SkipInvalidName:
		return "its name is not a valid memory key"
	case SkipSecret:
		return fmt.Sprintf("secret: %s (%s) on line %d; the file stays on this machine", s.Label, s.RuleID, s.Line)
	case SkipServerSecret:
		return fmt.Sprintf("the server found a secret: %s (%s) on line %d; the file stays on this machine", s.Label, s.RuleID, s.Line)
	case SkipPoisoning:
		return fmt.Sprintf("the server's poisoning checks refused it: %s (%s) on line %d; the file stays on this machine", s.Label, s.RuleID, s.Line)
	case SkipRefusedKey:
		return "refused key from the server: " + s.Detail
	case SkipWriteFailed:
		return "not written: " + s.Detail
	case SkipNoContent:
		return "the server sent no content"
	case SkipStaleCopy:
		return "refused as a stale copy: deleted on the server with exactly this content, by a deletion this machine did not sync; " +
			"the file stays here (delete it to agree, or edit it to write it again)"
	case SkipLeftAlone:
		return s.Detail
	case SkipHeldForReview:
		return "held for review (" + s.Detail + "); the file stays on this machine until an admin approves it"
	}
	return string(s.Kind)
}

// String is Message.
func (s Skip) String() string { return s.Message() }

// scanSkip is the Skip of a file memdir.Scan did not read (Scan ran with
// MaxBytes = MaxFileBytes).
func scanSkip(s memdir.Skipped) Skip {
	sk := Skip{Key: s.Key}
	switch {
	case s.TooLarge():
		sk.Kind, sk.Limit = SkipTooLarge, MaxFileBytes
	case s.Reason == memdir.SkipSymlink:
		sk.Kind = SkipSymlink
	case s.Reason == memdir.SkipNotRegular:
		sk.Kind = SkipNotRegular
	case s.Reason == memdir.SkipInvalid:
		sk.Kind = SkipInvalidName
	default: // memdir.SkipUnreadable, or a reason added since
		sk.Kind, sk.Detail = SkipUnreadable, s.Reason
	}
	return sk
}

// secretSkip is the Skip of a local file holding a secret.
func secretSkip(key string, f secretscan.Finding) Skip {
	return Skip{Key: key, Kind: SkipSecret, RuleID: f.RuleID, Label: f.Label, Line: f.Line}
}

// serverSecretSkip is the Skip of an upsert the server's scanner left out.
func serverSecretSkip(s teammem.SkippedSecret) Skip {
	return Skip{Key: s.Path, Kind: SkipServerSecret, RuleID: s.RuleID, Label: s.Label, Line: s.Line}
}
