package teammem

import (
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// WriteRequest is one atomic change of a space, from either API: the Claude
// Code PUT (upserts only, an optional space-level If-Match) or the /v1 entry
// and batch endpoints (per-entry base checksums, deletes).
type WriteRequest struct {
	Upserts []Upsert
	Deletes []Delete
	// IfMatch, when not empty, must equal the space checksum (EPreconditionFailed).
	IfMatch string
	// Restore marks the upserts as restores of old versions: recorded as
	// OpRestore and exempt from the tombstone rule, since an admin asked.
	Restore bool
	// DeleteAll deletes every entry live when the write takes the space's
	// lock (deleting a space), besides Deletes.
	DeleteAll bool
	// Explicit marks upserts a client asked for one by one, knowing the
	// space (a memory stores create or update): exempt from the tombstone
	// rule, which guards against whole-mirror re-uploads of stale copies.
	Explicit bool
	// RefuseSecrets refuses the whole write when any upsert holds a
	// secret, whatever the org's secret policy (ESecretDetected): for a
	// dialect that has no way to report a skipped file but a refusal (the
	// memory stores), where skipping one half of a rename would commit
	// the other.
	RefuseSecrets bool
}

// Upsert writes one entry. Base, when not nil, is the checksum the writer
// last saw: "" means "must not exist" (create-only), "*" means "must exist",
// anything else must equal the live entry's checksum, else the write
// conflicts (EConflict).
type Upsert struct {
	Key     string
	Content string
	Base    *string
	// MemoryID, when set, is the memory id the entry takes: a rename
	// carries the old key's id (see EntryChange.MemoryID).
	MemoryID string
	// Recreates, when not 0, is the version of the deletion the writer
	// knows of: the key was deleted at that version and the writer writes
	// it again on purpose. While the key's tombstone is that deletion, an
	// upsert of exactly the content it deleted is a new write, not a stale
	// copy (see Plan's tombstone rule). Any other tombstone (a deletion the
	// writer never saw) keeps the rule.
	Recreates int64
	// Overlap says the content is a merge that kept both sides of an
	// overlapping edit (the writer merged it): stored with the entry and
	// carried by the change feed, so that every machine pulling it can
	// name the file for review.
	Overlap bool
}

// Delete removes one entry, leaving a tombstone. Base works as for Upsert.
type Delete struct {
	Key  string
	Base *string
}

// SkippedSecret reports an entry left out because the scanner found a
// secret in it (its content, or its key). It names the rule, never the
// secret.
type SkippedSecret struct {
	// Path is the entry's key, or WithheldKey when the key itself holds
	// the secret: a report never repeats one.
	Path   string `json:"path"`
	RuleID string `json:"ruleId"`
	Label  string `json:"label"`
	Line   int    `json:"line"`
	// KeyChecksum, set when the key itself holds the secret, is
	// EntryChecksum of the key: how the sender tells which of its files
	// was left out without the report naming it.
	KeyChecksum string `json:"keyChecksum,omitempty"`
}

// WithheldKey stands in a report for an entry key that holds a secret.
const WithheldKey = "[key withheld: it holds a secret]"

// RuleScannerUnavailable is the rule id of the finding a SecretScanner
// reports for anything while it cannot scan: the write fails closed, but
// no key is said to hold a secret.
const RuleScannerUnavailable = "scanner-unavailable"

// KeyFindings turns the findings of a scan of key itself (of
// NameScanText(key)) into the report of a key that holds a secret: one per
// rule (the views repeat it), on line 1, naming WithheldKey and the key's
// checksum, never the key. A scanner that cannot scan is reported as is.
func KeyFindings(key string, found []SkippedSecret) []SkippedSecret {
	var out []SkippedSecret
	seen := map[string]bool{}
	for _, f := range found {
		if seen[f.RuleID] {
			continue
		}
		seen[f.RuleID] = true
		if f.RuleID != RuleScannerUnavailable {
			f.Path, f.KeyChecksum, f.Line = WithheldKey, EntryChecksum(key), 1
		}
		out = append(out, f)
	}
	return out
}

// Conflict reports the current state of an entry whose base did not hold.
type Conflict struct {
	Key      string `json:"key"`
	Checksum string `json:"checksum"` // "" when the entry does not exist
	Content  string `json:"content"`
	Deleted  bool   `json:"deleted"`
}

// WriteResult says what a committed write did.
type WriteResult struct {
	Space Space `json:"-"`
	// Repo is the space's repo (created by the write when it was new).
	Repo              Repo            `json:"-"`
	Written           []string        `json:"written"`
	Deleted           []string        `json:"deleted"`
	SkippedSecrets    []SkippedSecret `json:"skippedSecrets"`
	SkippedTombstoned []string        `json:"skippedTombstoned"`
	// Findings are the poisoning checks' findings on the entries written
	// (or, for a held write, proposed).
	Findings []PoisonFinding `json:"findings"`
	// Proposal, when set, is the proposal the write became: nothing was
	// written to the space (review before sharing); Space is its head as
	// the proposal saw it.
	Proposal *Proposal `json:"-"`
}

// Held reports whether the write was held for review as a proposal.
func (r WriteResult) Held() bool { return r.Proposal != nil }

// Noop reports whether the write changed nothing.
func (r WriteResult) Noop() bool { return len(r.Written) == 0 && len(r.Deleted) == 0 }

// ValidateWrite applies the rules that need no stored state: key validity,
// each key named once, content valid UTF-8 and within the size cap.
func ValidateWrite(req WriteRequest, l Limits) error {
	seen := make(map[string]bool, len(req.Upserts)+len(req.Deletes))
	check := func(key string) error {
		if err := ValidateKey(key); err != nil {
			return err
		}
		if seen[key] {
			return Errorf(EInvalid, "key %q is named more than once", key)
		}
		seen[key] = true
		return nil
	}
	for _, u := range req.Upserts {
		if err := check(u.Key); err != nil {
			return err
		}
		if !utf8.ValidString(u.Content) {
			return Errorf(EInvalid, "content of %q is not valid UTF-8", u.Key)
		}
		if strings.IndexByte(u.Content, 0) >= 0 {
			return Errorf(EInvalid, "content of %q contains a NUL byte; memory files are text", u.Key)
		}
		if len(u.Content) > l.MaxEntryBytes {
			return EntryTooLarge(u.Key, len(u.Content), l.MaxEntryBytes)
		}
		if u.Recreates < 0 {
			return Errorf(EInvalid, "upsert of %q: recreates must be the version of a deletion, not %d", u.Key, u.Recreates)
		}
	}
	for _, d := range req.Deletes {
		if err := check(d.Key); err != nil {
			return err
		}
	}
	return nil
}

// EntryTooLarge is the 413 for an entry over the size cap.
func EntryTooLarge(key string, size, max int) *Error {
	return Errorf(ETooLarge, "entry %q is %d bytes, over the limit of %d", key, size, max).WithReason(ReasonEntryTooLarge).
		WithDetails(map[string]any{"key": key, "size": size, "max_entry_bytes": max})
}

// TooManyEntries is the 413 for a space that would exceed its entry cap, in
// the shape the Claude Code client parses.
func TooManyEntries(max, received int) *Error {
	return Errorf(ETooLarge, "the space would hold %d entries, over the limit of %d", received, max).WithReason(ReasonTooManyEntries).
		WithDetails(map[string]any{"max_entries": max, "received_entries": received})
}

// BodyTooLarge is the 413 for a request body over the server's limit.
func BodyTooLarge(limit int64) *Error {
	return Errorf(ETooLarge, "request body is over the limit of %d bytes", limit).WithReason(ReasonBodyTooLarge).
		WithDetails(map[string]any{"max_body_bytes": limit})
}

// PlanInput is everything Plan needs besides the request.
type PlanInput struct {
	Space Space
	Heads map[string]Entry // every entry of the space, tombstones included, without content
	// Current returns the content of a live entry, for conflict reports.
	Current func(key string) (string, error)
	// Scan returns the secret findings of one upsert (nil when clean). Plan
	// calls it only for upserts that would change stored content.
	Scan func(key, content string) []SkippedSecret
	// Poison returns the poisoning findings of one upsert (nil when
	// clean); nil: no checks. Plan asks only for upserts it will write.
	Poison func(key, content string) []PoisonFinding
	// PoisonReject refuses the whole write when any upsert it would write
	// has findings (poisoning: reject).
	PoisonReject       bool
	Limits             Limits
	TombstoneRetention time.Duration
	Now                time.Time
	// Checksums, when set, holds each upsert's content checksum by key,
	// computed before the lock, so that hashing a large batch costs the
	// writer nothing.
	Checksums map[string]string
}

// Plan decides, under the space's write lock, what a request commits:
// precondition → per-entry bases → secret policy → tombstone rule → no-op
// filtering → entry cap. It returns the changes to apply (possibly none) and
// the report for the caller, or an error when nothing may be written.
func Plan(req WriteRequest, in PlanInput) ([]EntryChange, WriteResult, error) {
	var res WriteResult
	if req.IfMatch != "" && !ifMatch(req.IfMatch, in.Space) {
		return nil, res, Errorf(EPreconditionFailed, "the space changed: If-Match does not match the current checksum").
			WithDetails(map[string]any{"checksum": in.Space.Checksum, "version": in.Space.Version})
	}
	if err := checkBases(req, in); err != nil {
		return nil, res, err
	}
	if err := checkMirrorable(req, in.Heads); err != nil {
		return nil, res, err
	}
	var changes []EntryChange
	op := OpWrite
	if req.Restore {
		op = OpRestore
	}
	var rejected []SkippedSecret
	for _, u := range req.Upserts {
		head, exists := in.Heads[u.Key]
		sum, known := in.Checksums[u.Key]
		if !known {
			sum = EntryChecksum(u.Content)
		}
		switch {
		case exists && !head.Deleted && head.Checksum == sum:
			continue // no-op
		case exists && head.Deleted && head.Checksum == sum && !req.Restore && !req.Explicit &&
			(u.Recreates == 0 || u.Recreates != head.Version) && in.Now.Sub(head.UpdatedAt) < in.TombstoneRetention:
			// A stale copy: content the space deleted, from a writer that
			// does not name that deletion.
			res.SkippedTombstoned = append(res.SkippedTombstoned, u.Key)
			continue
		}
		if in.Scan != nil {
			if found := in.Scan(u.Key, u.Content); len(found) > 0 {
				if in.Limits.SecretPolicy == SecretPolicyReject || req.RefuseSecrets {
					rejected = append(rejected, found...)
				} else {
					res.SkippedSecrets = append(res.SkippedSecrets, found...)
				}
				continue
			}
		}
		c := EntryChange{Key: u.Key, Op: op, Content: u.Content, MemoryID: u.MemoryID, Checksum: sum, Recreates: u.Recreates, Overlap: u.Overlap}
		if in.Poison != nil {
			// Only content the secret scan passed is checked, so an
			// excerpt never shows a secret the scanner knows of.
			c.Findings = in.Poison(u.Key, u.Content)
			res.Findings = append(res.Findings, c.Findings...)
		}
		changes = append(changes, c)
		res.Written = append(res.Written, u.Key)
	}
	if len(rejected) > 0 {
		return nil, WriteResult{}, Errorf(ESecretDetected, "%d entries contain secrets; nothing was written", countPaths(rejected)).
			WithReason(ReasonSecretDetected).WithDetails(map[string]any{"skippedSecrets": rejected})
	}
	if in.PoisonReject && len(res.Findings) > 0 {
		return nil, WriteResult{}, PoisonRejected(res.Findings)
	}
	deletes := req.Deletes
	if req.DeleteAll {
		deletes = nil
		for k, h := range in.Heads {
			if !h.Deleted {
				deletes = append(deletes, Delete{Key: k})
			}
		}
		sort.Slice(deletes, func(i, j int) bool { return deletes[i].Key < deletes[j].Key })
	}
	for _, d := range deletes {
		if head, ok := in.Heads[d.Key]; ok && !head.Deleted {
			changes = append(changes, EntryChange{Key: d.Key, Op: OpDelete})
			res.Deleted = append(res.Deleted, d.Key)
		}
	}
	if err := checkEntryCap(in, changes); err != nil {
		return nil, WriteResult{}, err
	}
	sort.Strings(res.Written)
	sort.Strings(res.Deleted)
	return changes, res, nil
}

func countPaths(s []SkippedSecret) int {
	seen := map[string]bool{}
	for _, f := range s {
		seen[f.Path] = true
	}
	return len(seen)
}

// ifMatch reports whether an If-Match value holds for the space: "*" holds
// for any space that was ever written, a checksum only for the current one.
func ifMatch(v string, sp Space) bool {
	if strings.TrimSpace(v) == "*" {
		return sp.Version > 0
	}
	return NormalizeETag(v) == sp.Checksum
}

// checkBases collects every upsert and delete whose base no longer holds.
func checkBases(req WriteRequest, in PlanInput) error {
	var conflicts []Conflict
	check := func(key string, base *string) error {
		if base == nil {
			return nil
		}
		head, ok := in.Heads[key]
		live := ok && !head.Deleted
		cur := ""
		if live {
			cur = head.Checksum
		}
		if NormalizeETag(*base) == cur || (strings.TrimSpace(*base) == "*" && live) {
			return nil
		}
		c := Conflict{Key: key, Checksum: cur, Deleted: ok && head.Deleted}
		if live && in.Current != nil {
			content, err := in.Current(key)
			if err != nil {
				return err
			}
			c.Content = content
		}
		conflicts = append(conflicts, c)
		return nil
	}
	for _, u := range req.Upserts {
		if err := check(u.Key, u.Base); err != nil {
			return err
		}
	}
	for _, d := range req.Deletes {
		if err := check(d.Key, d.Base); err != nil {
			return err
		}
	}
	if len(conflicts) == 0 {
		return nil
	}
	return Errorf(EConflict, "%d entries changed since their base; nothing was written", len(conflicts)).
		WithDetails(map[string]any{"conflicts": conflicts})
}

// checkEntryCap refuses a write that would leave more live entries than the
// cap allows. A space already over the cap (after an admin lowered it) may
// still change and shrink, just not grow.
func checkEntryCap(in PlanInput, changes []EntryChange) error {
	before := 0
	for _, h := range in.Heads {
		if !h.Deleted {
			before++
		}
	}
	after := before
	for _, c := range changes {
		h, ok := in.Heads[c.Key]
		live := ok && !h.Deleted
		switch {
		case c.Op == OpDelete && live:
			after--
		case c.Op != OpDelete && !live:
			after++
		}
	}
	if after > in.Limits.MaxEntries && after > before {
		return TooManyEntries(in.Limits.MaxEntries, after)
	}
	return nil
}

// ApplyChanges returns the heads after changes commit at version at time now,
// and the space summary (checksum, live count, live bytes) they imply. Drivers
// call it so both compute the head the same way.
func ApplyChanges(heads map[string]Entry, changes []EntryChange, version int64, actor Actor, now time.Time) map[string]Entry {
	out := make(map[string]Entry, len(heads)+len(changes))
	for k, v := range heads {
		out[k] = v
	}
	for _, c := range changes {
		e := Entry{Key: c.Key, Version: version, AuthorID: actor.UserID, ClientID: actor.ClientID, UpdatedAt: now}
		head, had := heads[c.Key]
		if c.Op == OpDelete {
			e.Deleted = true
			e.Checksum = head.Checksum
			e.MemoryID = head.MemoryID
		} else {
			e.Checksum = c.Checksum
			if e.Checksum == "" {
				e.Checksum = EntryChecksum(c.Content)
			}
			e.Size = len(c.Content)
			e.MemoryID = memoryIDOf(c, head, had)
		}
		out[c.Key] = e
	}
	return out
}

// Summarize returns the checksum, live entry count and live byte total of a
// space with the given heads.
func Summarize(heads map[string]Entry) (checksum string, count int, bytes int64) {
	live := make([]string, 0, len(heads))
	for k, h := range heads {
		if !h.Deleted {
			live = append(live, k)
			bytes += int64(h.Size)
		}
	}
	return sortedSpaceChecksum(live, func(k string) string { return heads[k].Checksum }), len(live), bytes
}

// memoryIDOf is the memory id a written entry takes: the one the change
// carries (a rename), else the live entry's, else a new one (a new key, or
// one written again after its delete).
func memoryIDOf(c EntryChange, head Entry, had bool) string {
	switch {
	case c.MemoryID != "":
		return c.MemoryID
	case had && !head.Deleted && head.MemoryID != "":
		return head.MemoryID
	default:
		return NewMemoryID()
	}
}
