package teammem

import (
	"context"
	"errors"
	"sync"
	"time"
)

// SecretScanner finds secrets in an entry's content for an org (whose
// allowlist it applies). Findings never carry the secret.
type SecretScanner interface {
	ScanEntry(org Org, key, content string) []SkippedSecret
}

// WriteCall is one write as a dialect hands it to the core: who writes,
// where, what, and what the dialect wants recorded with it. It is a plain
// value; every dialect (the Claude Code endpoint, /v1, memory stores) builds
// one and calls Writer.Write.
type WriteCall struct {
	Principal Principal
	Repo      string // the repo's slug
	Scope     Scope
	ClientID  string // who wrote, as the client names itself
	// API names the dialect for metrics and audit ("claude_code", "v1").
	API     string
	Request WriteRequest
	// Moderate marks an admin's moderation of a team space (restoring a
	// version, deleting the space): it needs ActTeamModerate too.
	Moderate bool
	// Audit lists events that commit in the write's own transaction when
	// it changes something (ActorID and Repo default to the call's).
	Audit []AuditEvent
	// Target is the repo and space the write goes to, as the server found
	// them (from its cache): either has ID 0 when it does not exist yet.
	// Missing, when set, is why there is none (the repo does not exist and
	// the org does not create repos); it is returned once the caller is
	// authorized.
	Target  Target
	Missing error
	// SessionID is the Claude Code session the write came from, when the
	// client said (X-Claude-Code-Session-Id); recorded with each version.
	SessionID string
	// Approve, when set, is the pending proposal this write applies (its
	// Request, with its bases): an admin's approval. The versions name
	// the proposal's author; review and poisoning: reject do not apply.
	Approve *Proposal
}

// Target is a write's repo and space.
type Target struct {
	Repo  Repo
	Space Space
}

// ChangePublisher tells other replicas and their clients of committed
// heads (events.Spaces).
type ChangePublisher interface {
	// Announcement names the notification of repo's committed head, which
	// a store that CanAnnounce sends in the write's own transaction.
	Announcement(repo string, head Space) (Announcement, bool)
	// Publish announces a committed head that its write did not.
	Publish(ctx context.Context, repo string, head Space)
}

// Writer is the one write path of every dialect, a straight line:
// authorize → cheap checks (slug, keys, sizes, entry count) → scan (outside
// any lock) → store apply (plan under the space's lock; audit in the same
// transaction; announce where the store can) → publish.
type Writer struct {
	Store              Store
	Publisher          ChangePublisher // nil: nobody hears of changes
	Scanner            SecretScanner   // nil: no scanning
	Poison             PoisonChecker   // nil: no poisoning checks
	Defaults           ServerDefaults
	TombstoneRetention time.Duration
	Now                func() time.Time // nil: time.Now
	// CheckSlots bounds how many large entries are checked (secret scan,
	// poisoning) at once; 0: GOMAXPROCS-1, at least 1 (scan.go).
	CheckSlots int

	slotsOnce sync.Once
	slots     chan struct{}
}

// maxScanRounds bounds how often a write goes back to scan entries that
// changed between its scan and its lock, before it gives up as busy.
const maxScanRounds = 4

// errRescan aborts a plan that met content nobody scanned yet.
var errRescan = errors.New("content changed since it was scanned")

// Write commits call's request to its space as one version, or returns the
// error that says why nothing was written. A repo or space that does not
// exist yet is created only once a plan against the empty space found
// something to commit, so a refused or empty write leaves nothing behind.
func (w *Writer) Write(ctx context.Context, call WriteCall) (res WriteResult, err error) {
	if err := authorizeWrite(call); err != nil {
		return res, err
	}
	p, req := call.Principal, call.Request
	limits := p.Org.Limits(w.Defaults)
	if err := checkCall(call, limits); err != nil {
		return res, err
	}
	if call.Missing != nil {
		return res, call.Missing
	}
	repo, space := call.Target.Repo, call.Target.Space
	// Hashed once, outside any lock.
	sums := make(map[string]string, len(req.Upserts))
	for _, u := range req.Upserts {
		sums[u.Key] = EntryChecksum(u.Content)
	}
	sc := scanner{w: w, org: p.Org, poison: w.poisonChecker(call), done: map[string]scanResult{}}
	if err := sc.before(ctx, w.Store, space, req, sums); err != nil {
		return res, err
	}
	plan := func(s Space, heads map[string]Entry, current func(string) (string, error)) ([]EntryChange, WriteResult, error) {
		in := PlanInput{Space: s, Heads: heads, Current: current, Limits: limits, TombstoneRetention: w.TombstoneRetention,
			Now: w.now(), Scan: sc.lookup, Poison: sc.poisonFunc(), PoisonReject: rejectsPoison(call, limits),
			Checksums: sums}
		changes, r, err := Plan(req, in)
		if err == nil && len(sc.missing) > 0 {
			return nil, r, errRescan
		}
		return changes, r, err
	}
	if reason := holdReason(call, limits); reason != "" {
		r, held, err := w.propose(ctx, call, reason, &sc, plan)
		if err != nil || held {
			return r, err
		}
	}
	if space.ID == 0 {
		changes, r, err := plan(space, map[string]Entry{}, nil)
		if err != nil || len(changes) == 0 {
			r.Space = space
			return r, err
		}
		if repo, space, err = w.ensure(ctx, p, call); err != nil {
			return WriteResult{}, err
		}
	}
	for round := 1; ; round++ {
		announced := false
		head, err := SpaceApply(ctx, w.Store, p.Org.ID, space.ID, ApplyParams{
			Actor: actorOf(call),
			// Planned before the lock when the store has the space's heads
			// cached: the writer turn is then only the SQL.
			Early: true,
			Plan: func(s Space, heads map[string]Entry, current func(string) (string, error)) ([]EntryChange, error) {
				changes, r, err := plan(s, heads, current)
				res = r
				return changes, err
			},
			Audit: func() []AuditEvent { return auditOf(call, res) },
			Announce: func(head Space) (Announcement, bool) {
				if w.Publisher == nil {
					return Announcement{}, false
				}
				a, ok := w.Publisher.Announcement(call.Repo, head)
				announced = ok && w.Store.CanAnnounce()
				return a, ok
			},
		})
		switch {
		case errors.Is(err, errRescan) && round < maxScanRounds:
			// Outside the lock, then plan again.
			if err := sc.rescan(ctx); err != nil {
				return WriteResult{}, err
			}
			continue
		case errors.Is(err, errRescan):
			return WriteResult{}, Errorf(EUnavailable, "the space keeps changing under this write; try again")
		}
		res.Space, res.Repo = head, repo
		if err == nil && !res.Noop() && !announced && w.Publisher != nil {
			w.Publisher.Publish(ctx, call.Repo, head)
		}
		return res, err
	}
}

// authorizeWrite checks that the caller may write the call's space (and
// moderate it, for a moderation).
func authorizeWrite(call WriteCall) error {
	p := call.Principal
	if err := Authorize(p, ScopeAction(call.Scope, true), true); err != nil {
		return err
	}
	if call.Moderate && call.Scope == ScopeTeam {
		return Authorize(p, ActTeamModerate, true)
	}
	if call.Approve != nil {
		if err := Authorize(p, ActTeamReview, true); err != nil {
			return err
		}
		return checkApproval(call.Approve)
	}
	return nil
}

// actorOf is who a write's versions name: the caller, or for an approval
// the proposal's author, client and dialect (the approver is in the audit
// log; a proposal keeps no key or session).
func actorOf(call WriteCall) Actor {
	if a := call.Approve; a != nil {
		return Actor{UserID: a.AuthorID, ClientID: a.ClientID, API: a.API, KeyID: a.KeyID, SessionID: a.SessionID}
	}
	p := call.Principal
	return Actor{UserID: p.User.ID, ClientID: call.ClientID, KeyID: p.Key.ID, API: call.API, SessionID: call.SessionID}
}

// checkCall runs the checks that need no stored state and cost in
// proportion to the request: a request that will be refused is refused
// before any scan. More upserts than the entry cap can never all land
// (every one would be live afterwards), so that is refused here too.
func checkCall(call WriteCall, limits Limits) error {
	// A store created through the memory stores API has a hidden repo row
	// whose slug is deliberately not a repo slug; its target was loaded.
	if !call.Target.Repo.Store {
		if err := ValidateRepoSlug(call.Repo); err != nil {
			return err
		}
	}
	if !call.Scope.Valid() {
		return Errorf(EInvalid, "scope must be team or personal")
	}
	// The count first: refusing 100,000 entries must not validate each.
	if n := len(call.Request.Upserts); n > limits.MaxEntries {
		return TooManyEntries(limits.MaxEntries, n)
	}
	return ValidateWrite(call.Request, limits)
}

// ensure creates the call's repo and space, which a plan against the empty
// space found something to commit to.
func (w *Writer) ensure(ctx context.Context, p Principal, call WriteCall) (Repo, Space, error) {
	repo, err := w.Store.RepoEnsure(ctx, p.Org.ID, call.Repo)
	if err != nil {
		return repo, Space{}, err
	}
	ref := SpaceRef{RepoID: repo.ID, Scope: call.Scope}
	if call.Scope == ScopePersonal {
		ref.UserID = p.User.ID
	}
	space, err := w.Store.SpaceEnsure(ctx, p.Org.ID, ref)
	return repo, space, err
}

// auditOf lists the events that commit with a write: the call's own and,
// when the secret policy left entries out, which rules found them.
func auditOf(call WriteCall, res WriteResult) []AuditEvent {
	events := make([]AuditEvent, 0, len(call.Audit)+1)
	for _, e := range call.Audit {
		if e.ActorID == 0 {
			e.ActorID = call.Principal.User.ID
		}
		if e.Repo == "" {
			e.Repo = call.Repo
		}
		// Each event says what the write did, counted under the lock.
		details := map[string]any{"written": len(res.Written), "deleted": len(res.Deleted)}
		for k, v := range e.Details {
			details[k] = v
		}
		e.Details = details
		events = append(events, e)
	}
	if len(res.Findings) > 0 {
		events = append(events, AuditEvent{ActorID: call.Principal.User.ID, Action: "push.poisoning_flagged", Repo: call.Repo,
			Details: map[string]any{"api": call.API, "rule_ids": PoisonRuleIDs(res.Findings)}})
	}
	if len(res.SkippedSecrets) > 0 {
		events = append(events, AuditEvent{ActorID: call.Principal.User.ID, Action: "push.secret_skipped", Repo: call.Repo,
			Details: map[string]any{"api": call.API, "rule_ids": RuleIDs(res.SkippedSecrets)}})
	}
	return events
}

// RuleIDs lists the distinct rule ids of findings, in order of appearance.
func RuleIDs(found []SkippedSecret) []string {
	seen := map[string]bool{}
	ids := []string{}
	for _, f := range found {
		if !seen[f.RuleID] {
			seen[f.RuleID] = true
			ids = append(ids, f.RuleID)
		}
	}
	return ids
}

func (w *Writer) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}
