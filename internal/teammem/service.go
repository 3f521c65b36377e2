package teammem

import (
	"context"
	"errors"
	"math"
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
	// Store, when set, is the memory store the write goes to, as the
	// dialect loaded it to authorize the request (by its id, which no repo
	// slug reaches for an API store). Otherwise Repo and Scope name the
	// space, which the Writer finds through its Targets.
	Store *MemoryStore
	// Timing, when set, is told how long the write waited for its space's
	// lock and held it.
	Timing *WriteTiming
	// SessionID is the Claude Code session the write came from, when the
	// client said (X-Claude-Code-Session-Id); recorded with each version.
	SessionID string
	// DreamOutput marks a write of a dream to its create_new output store:
	// that store is a proposal itself until someone applies it (and the
	// apply's write is reviewed as any other), so review does not hold
	// it; secret and poisoning checks still refuse what they refuse.
	DreamOutput bool
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

// Writer is the one write path of every dialect, a straight line: find
// the space (Targets, through the store's head cache; names holding
// secrets refused) → authorize → cheap checks (slug, keys, sizes, entry
// count) → scan (outside any lock) → store apply (plan under the space's
// lock; audit in the same transaction; announce where the store can) →
// publish → keep the head cache true.
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
	defer func() { w.noteHead(call, res, err) }()
	target, missing, err := w.target(ctx, call)
	if err != nil {
		return res, err
	}
	if err := authorizeWrite(call); err != nil {
		return res, err
	}
	// A refusal may name the key it refuses, and a key may hold a secret.
	defer func() {
		if err != nil {
			err = w.withholdSecrets(call.Principal.Org, err)
		}
	}()
	p, req := call.Principal, call.Request
	limits := p.Org.Limits(w.Defaults)
	if err := checkCall(call, target, limits); err != nil {
		return res, err
	}
	if missing != nil {
		return res, missing // said only to a caller who may write
	}
	repo, space := target.Repo, target.Space
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
		r, held, err := w.propose(ctx, call, target, reason, &sc, plan)
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
			Actor:  actorOf(call),
			Timing: call.Timing,
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
func checkCall(call WriteCall, target Target, limits Limits) error {
	// A store created through the memory stores API has a hidden repo row
	// whose slug is deliberately not a repo slug; its target was loaded.
	if !target.Repo.Store {
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

// Targets is the caching store decorator the Writer finds a write's space
// through, which the server's reads share.
func (w *Writer) Targets() Targets {
	return Targets{Store: w.Store, Scanner: w.Scanner, Defaults: w.Defaults}
}

// target finds the repo and space call writes. missing, when set, is why
// there is none (the repo does not exist and the org does not create
// repos): Write says it once the caller is authorized. The client name,
// stored with every version written, and the slug of a repo the write
// would create, which names it for good, are refused when they hold a
// secret, rather than replaced, so that a client sending one learns it at
// once; an existing repo's slug was checked when it was created.
func (w *Writer) target(ctx context.Context, call WriteCall) (t Target, missing, err error) {
	org := call.Principal.Org
	if m := call.Store; m != nil {
		// Named by its id: it was loaded, and its repo exists (and was
		// checked when it was made).
		return Target{Repo: m.Repo, Space: m.Space}, nil, RefuseSecret(w.Scanner, org, "client", call.ClientID)
	}
	t, err = w.Targets().Find(ctx, call.Principal, call.Repo, call.Scope, true)
	var te *Error
	switch {
	case errors.As(err, &te) && te.Code == ENotFound:
		return Target{}, err, nil
	case err != nil:
		return t, nil, err
	}
	return t, nil, w.refuseNames(call, t)
}

// refuseNames refuses the names a write to t would store that hold a
// secret: the client's, and the slug of a repo it would create.
func (w *Writer) refuseNames(call WriteCall, t Target) error {
	org := call.Principal.Org
	if t.Repo.ID == 0 {
		if err := RefuseSecret(w.Scanner, org, "repo", call.Repo); err != nil {
			return err
		}
	}
	return RefuseSecret(w.Scanner, org, "client", call.ClientID)
}

// noteHead keeps the store's cache of space heads true after a write: the
// head it committed, or the one it read under the space's lock without
// moving it, is the newest there is.
func (w *Writer) noteHead(call WriteCall, res WriteResult, err error) {
	cache, now := w.Store.HeadsCache(), time.Now()
	code := ErrorCode(err)
	if code == EUnavailable || code == EInternal {
		// The write may have committed all the same (the connection died
		// at COMMIT): the next read of the space goes to the database, so
		// a client that retries or reads sees what is there.
		cache.SpaceMoved(SpaceKeyOf(call.Principal, call.Repo, call.Scope), math.MaxInt64)
	}
	k := SpaceKey{Org: call.Principal.Org.ID, Repo: call.Repo, Scope: res.Space.Scope, User: res.Space.UserID}
	switch {
	case err == nil && !res.Noop():
		// The next pull or push of the space here reads nothing.
		cache.PutHead(k, res.Repo, res.Space, now)
	case res.Space.ID != 0 && !res.Held() && (err == nil || code == EPreconditionFailed || code == EConflict):
		// The write changed nothing, or was refused for its base, after
		// reading the head under the space's lock: that head is committed
		// and as new as any. Caching it means a head this process holds
		// wrongly (a read that raced a write) is corrected by the first
		// write it makes fail, instead of refusing every retry until the
		// TTL ends (PutHead never goes back to an older version). A held
		// write read no head under the lock: its proposal's target is the
		// head it found, perhaps the cached one, so it corrects nothing.
		cache.CorrectHead(k, res.Repo, res.Space, now)
	}
}

// Ensure makes sure the repo and space call names exist, by the rules of
// a first push (the org may create repos; names holding secrets are
// refused), and returns them. The caller has authorized the write.
func (w *Writer) Ensure(ctx context.Context, call WriteCall) (Target, error) {
	t, err := w.Targets().Find(ctx, call.Principal, call.Repo, call.Scope, true)
	if err != nil || t.Space.ID != 0 {
		return t, err
	}
	if err := w.refuseNames(call, t); err != nil {
		return t, err
	}
	t.Repo, t.Space, err = w.ensure(ctx, call.Principal, call)
	return t, err
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
