package storetest

import (
	"testing"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// dream returns a pending dream of sp created at created.
func (b *bundle) dream(t *testing.T, sp teammem.Space, behavior teammem.DreamBehavior, created time.Time) teammem.Dream {
	t.Helper()
	d := teammem.Dream{ID: teammem.NewDreamID(), OrgID: b.org.ID, InputSpaceID: sp.ID, InputStoreUID: sp.UID, Model: "m1",
		ModelSpeed: teammem.DreamSpeedStandard, Behavior: behavior, CreatedAt: created.UTC().Truncate(time.Microsecond),
		CreatorUserID: b.owner.ID, CreatorKeyID: "key1"}
	return must[teammem.Dream](t)(b.store.DreamCreate(b.ctx, b.org.ID, d))
}

// testDreams: create and get a dream with every field, and the hold of an
// update_existing dream on its store until it is released.
func testDreams(t *testing.T, b *bundle) {
	sp := b.space(t, "acme/dream")
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	d := teammem.Dream{ID: teammem.NewDreamID(), OrgID: b.org.ID, InputSpaceID: sp.ID, InputStoreUID: sp.UID, SessionIDs: []string{"sesn_a", "sesn_b"},
		Model: "m1", ModelSpeed: "standard", Instructions: "tidy", Behavior: teammem.DreamCreateNew, CreatedAt: at, CreatorUserID: b.owner.ID, CreatorKeyID: "k"}
	got := must[teammem.Dream](t)(b.store.DreamCreate(b.ctx, b.org.ID, d))
	if got.Status != teammem.DreamPending || got.Review.State != teammem.ReviewNone || !got.CreatedAt.Equal(at) || len(got.SessionIDs) != 2 ||
		got.Instructions != "tidy" || got.InputStoreUID != sp.UID || got.StartedAt != nil || got.ReleasedAt != nil || got.CreatorKeyID != "k" {
		t.Fatalf("created %+v", got)
	}
	if again := must[teammem.Dream](t)(b.store.DreamGet(b.ctx, b.org.ID, d.ID)); again.ID != d.ID || again.Model != "m1" {
		t.Fatalf("get %+v", again)
	}
	_, err := b.store.DreamGet(b.ctx, b.org.ID, teammem.NewDreamID())
	wantCode(t, err, teammem.ENotFound)
	other := must[teammem.Org](t)(b.store.OrgCreate(b.ctx, teammem.OrgCreateParams{Slug: "other", Name: "Other"}))
	_, err = b.store.DreamGet(b.ctx, other.ID, d.ID)
	wantCode(t, err, teammem.ENotFound)
	_, err = b.store.DreamCancel(b.ctx, other.ID, d.ID, at)
	wantCode(t, err, teammem.ENotFound)

	held := b.dream(t, sp, teammem.DreamUpdateExisting, at)
	d2 := teammem.Dream{ID: teammem.NewDreamID(), InputSpaceID: sp.ID, InputStoreUID: sp.UID, Model: "m1", Behavior: teammem.DreamUpdateExisting, CreatedAt: at}
	_, err = b.store.DreamCreate(b.ctx, b.org.ID, d2)
	wantCode(t, err, teammem.EConflict)
	if msg := teammem.ErrorMessage(err); msg != teammem.DreamHeldMessage(teammem.StoreIDPrefix+sp.UID, held.ID) {
		t.Fatalf("held message = %q", msg)
	}
	b.dream(t, sp, teammem.DreamCreateNew, at) // create_new dreams never hold
	// A running dream canceled holds until released; a pending one is released by the cancel.
	must[teammem.Dream](t)(b.store.DreamStart(b.ctx, b.org.ID, held.ID, teammem.DreamStartParams{At: at}))
	c := must[teammem.Dream](t)(b.store.DreamCancel(b.ctx, b.org.ID, held.ID, at))
	if c.Status != teammem.DreamCanceled || c.ReleasedAt != nil || c.EndedAt == nil {
		t.Fatalf("canceled running %+v", c)
	}
	_, err = b.store.DreamCreate(b.ctx, b.org.ID, d2)
	wantCode(t, err, teammem.EConflict)
	must[teammem.Dream](t)(b.store.DreamRelease(b.ctx, b.org.ID, held.ID, at))
	p := must[teammem.Dream](t)(b.store.DreamCreate(b.ctx, b.org.ID, d2))
	if p = must[teammem.Dream](t)(b.store.DreamCancel(b.ctx, b.org.ID, p.ID, at)); p.ReleasedAt == nil {
		t.Fatalf("a canceled pending dream is not released: %+v", p)
	}
	d2.ID = teammem.NewDreamID()
	must[teammem.Dream](t)(b.store.DreamCreate(b.ctx, b.org.ID, d2))
}

// testDreamLifecycle: every transition once, and its repeats.
func testDreamLifecycle(t *testing.T, b *bundle) {
	sp := b.space(t, "acme/life")
	at := time.Now().UTC().Truncate(time.Microsecond)
	d := b.dream(t, sp, teammem.DreamCreateNew, at)
	_, err := b.store.DreamArchive(b.ctx, b.org.ID, d.ID, at)
	wantCode(t, err, teammem.EInvalid)
	_, err = b.store.DreamFinish(b.ctx, b.org.ID, d.ID, teammem.DreamFinishParams{Status: teammem.DreamCompleted, At: at})
	wantCode(t, err, teammem.EConflict)
	_, err = b.store.DreamRelease(b.ctx, b.org.ID, d.ID, at)
	wantCode(t, err, teammem.EConflict)
	s := must[teammem.Dream](t)(b.store.DreamStart(b.ctx, b.org.ID, d.ID, teammem.DreamStartParams{At: at, MaxRunning: 1,
		Base: map[string]string{"a.md": "sha256:aa"}, RunSessionID: "sesn_run"}))
	if s.Status != teammem.DreamRunning || s.StartedAt == nil || s.HeartbeatAt == nil || s.Base["a.md"] != "sha256:aa" || s.RunSessionID != "sesn_run" {
		t.Fatalf("started %+v", s)
	}
	_, err = b.store.DreamStart(b.ctx, b.org.ID, d.ID, teammem.DreamStartParams{At: at})
	wantCode(t, err, teammem.EConflict)
	// The org runs one already: a second start waits.
	d2 := b.dream(t, sp, teammem.DreamCreateNew, at)
	_, err = b.store.DreamStart(b.ctx, b.org.ID, d2.ID, teammem.DreamStartParams{At: at, MaxRunning: 1})
	wantCode(t, err, teammem.ERateLimited)
	if got := must[teammem.Dream](t)(b.store.DreamGet(b.ctx, b.org.ID, d2.ID)); got.Status != teammem.DreamPending {
		t.Fatalf("a refused start changed the dream: %+v", got)
	}
	out := must[teammem.Dream](t)(b.store.DreamOutputSet(b.ctx, b.org.ID, d.ID, teammem.DreamOutputParams{SpaceID: 4242, StoreUID: "abc"}))
	if out.OutputStoreID() != "memstore_abc" || out.OutputSpaceID != 4242 {
		t.Fatalf("output %+v", out)
	}
	_, err = b.store.DreamOutputSet(b.ctx, b.org.ID, d.ID, teammem.DreamOutputParams{SpaceID: 4343, StoreUID: "def"})
	wantCode(t, err, teammem.EConflict)
	usage := teammem.DreamUsage{InputTokens: 10, OutputTokens: 2, CacheCreationInputTokens: 3, CacheReadInputTokens: 4}
	later := at.Add(time.Minute)
	pr := must[teammem.Dream](t)(b.store.DreamProgress(b.ctx, b.org.ID, d.ID, teammem.DreamProgressParams{At: later, Usage: usage}))
	if pr.Usage != usage || !pr.HeartbeatAt.Equal(later) {
		t.Fatalf("progress %+v", pr)
	}
	_, err = b.store.DreamFinish(b.ctx, b.org.ID, d.ID, teammem.DreamFinishParams{Status: teammem.DreamCanceled, At: at})
	wantCode(t, err, teammem.EInvalid)
	f := must[teammem.Dream](t)(b.store.DreamFinish(b.ctx, b.org.ID, d.ID, teammem.DreamFinishParams{Status: teammem.DreamCompleted, At: later, Usage: usage}))
	if f.Status != teammem.DreamCompleted || f.EndedAt == nil || f.Review.State != teammem.ReviewPending || f.Usage != usage {
		t.Fatalf("finished %+v", f)
	}
	_, err = b.store.DreamCancel(b.ctx, b.org.ID, d.ID, at)
	wantCode(t, err, teammem.EInvalid)
	_, err = b.store.DreamProgress(b.ctx, b.org.ID, d.ID, teammem.DreamProgressParams{At: later})
	wantCode(t, err, teammem.EConflict)
	r1 := must[teammem.Dream](t)(b.store.DreamRelease(b.ctx, b.org.ID, d.ID, later))
	r2 := must[teammem.Dream](t)(b.store.DreamRelease(b.ctx, b.org.ID, d.ID, later.Add(time.Hour)))
	if r1.ReleasedAt == nil || !r2.ReleasedAt.Equal(*r1.ReleasedAt) {
		t.Fatalf("release again moved it: %v then %v", r1.ReleasedAt, r2.ReleasedAt)
	}
	a1 := must[teammem.Dream](t)(b.store.DreamArchive(b.ctx, b.org.ID, d.ID, later))
	a2 := must[teammem.Dream](t)(b.store.DreamArchive(b.ctx, b.org.ID, d.ID, later.Add(time.Hour)))
	if a1.ArchivedAt == nil || !a2.ArchivedAt.Equal(*a1.ArchivedAt) {
		t.Fatalf("archive again moved it: %v then %v", a1.ArchivedAt, a2.ArchivedAt)
	}
	// A held Apply links the pending review to its proposal, once; a
	// rejection unlinks it; the list finds the dream by its proposal.
	if l := must[teammem.Dream](t)(b.store.DreamReviewProposal(b.ctx, b.org.ID, d.ID, teammem.DreamProposalParams{To: 7})); l.Review.ProposalID != 7 {
		t.Fatalf("linked %+v", l.Review)
	}
	must[teammem.Dream](t)(b.store.DreamReviewProposal(b.ctx, b.org.ID, d.ID, teammem.DreamProposalParams{To: 7}))
	_, err = b.store.DreamReviewProposal(b.ctx, b.org.ID, d.ID, teammem.DreamProposalParams{To: 8})
	wantCode(t, err, teammem.EConflict)
	if ds := must[[]teammem.Dream](t)(b.store.DreamList(b.ctx, b.org.ID, teammem.DreamFilter{ProposalID: 7, IncludeArchived: true})); len(ds) != 1 || ds[0].ID != d.ID {
		t.Fatalf("dreams of proposal 7: %v", ds)
	}
	if u := must[teammem.Dream](t)(b.store.DreamReviewProposal(b.ctx, b.org.ID, d.ID, teammem.DreamProposalParams{From: 7})); u.Review.ProposalID != 0 {
		t.Fatalf("unlinked %+v", u.Review)
	}
	must[teammem.Dream](t)(b.store.DreamReviewProposal(b.ctx, b.org.ID, d.ID, teammem.DreamProposalParams{To: 9}))
	rv := must[teammem.Dream](t)(b.store.DreamReviewSet(b.ctx, b.org.ID, d.ID, teammem.DreamReviewParams{From: teammem.ReviewPending, To: teammem.ReviewApplied, At: later, By: b.owner.ID}))
	if rv.Review.State != teammem.ReviewApplied || rv.Review.By != b.owner.ID || rv.Review.At == nil || rv.Review.ProposalID != 9 {
		t.Fatalf("review %+v", rv.Review)
	}
	_, err = b.store.DreamReviewSet(b.ctx, b.org.ID, d.ID, teammem.DreamReviewParams{From: teammem.ReviewPending, To: teammem.ReviewDiscarded, At: later})
	wantCode(t, err, teammem.EConflict)
	_, err = b.store.DreamReviewProposal(b.ctx, b.org.ID, d.ID, teammem.DreamProposalParams{From: 9})
	wantCode(t, err, teammem.EConflict)
	// Now d2 may start; canceled while running, a worker may still record usage.
	must[teammem.Dream](t)(b.store.DreamStart(b.ctx, b.org.ID, d2.ID, teammem.DreamStartParams{At: at, MaxRunning: 1}))
	must[teammem.Dream](t)(b.store.DreamCancel(b.ctx, b.org.ID, d2.ID, at))
	if c := must[teammem.Dream](t)(b.store.DreamCancel(b.ctx, b.org.ID, d2.ID, later)); !c.EndedAt.Equal(at) {
		t.Fatalf("cancel again moved ended_at: %+v", c)
	}
	if pr := must[teammem.Dream](t)(b.store.DreamProgress(b.ctx, b.org.ID, d2.ID, teammem.DreamProgressParams{At: later, Usage: usage})); pr.Status != teammem.DreamCanceled || pr.Usage != usage {
		t.Fatalf("progress after cancel %+v", pr)
	}
}

// testDreamList: order, filters, visibility and cursor pages.
func testDreamList(t *testing.T, b *bundle) {
	sp := b.space(t, "acme/list")
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range 5 {
		b.dream(t, sp, teammem.DreamCreateNew, t0.Add(time.Duration(i)*time.Hour))
	}
	same := b.dream(t, sp, teammem.DreamCreateNew, t0.Add(4*time.Hour)) // a tie on created_at, ordered by id
	repo := must[teammem.Repo](t)(b.store.RepoEnsure(b.ctx, b.org.ID, "acme/list"))
	mine := must[teammem.Space](t)(b.store.SpaceEnsure(b.ctx, b.org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: b.member.ID}))
	pd := teammem.Dream{ID: teammem.NewDreamID(), InputSpaceID: mine.ID, InputStoreUID: mine.UID, InputOwnerID: b.member.ID, Model: "m",
		Behavior: teammem.DreamCreateNew, CreatedAt: t0.Add(-time.Hour)}
	must[teammem.Dream](t)(b.store.DreamCreate(b.ctx, b.org.ID, pd))

	all := must[[]teammem.Dream](t)(b.store.DreamList(b.ctx, b.org.ID, teammem.DreamFilter{}))
	if len(all) != 7 || all[6].ID != pd.ID {
		t.Fatalf("list = %d dreams", len(all))
	}
	for i := 1; i < len(all); i++ {
		p, c := all[i-1], all[i]
		if p.CreatedAt.Before(c.CreatedAt) || p.CreatedAt.Equal(c.CreatedAt) && p.ID < c.ID {
			t.Fatalf("not newest first at %d: %v %s, %v %s", i, p.CreatedAt, p.ID, c.CreatedAt, c.ID)
		}
	}
	if got := must[[]teammem.Dream](t)(b.store.DreamList(b.ctx, b.org.ID, teammem.DreamFilter{ViewerUserID: b.owner.ID})); len(got) != 6 {
		t.Fatalf("another user's personal store's dream shows: %d", len(got))
	}
	if got := must[[]teammem.Dream](t)(b.store.DreamList(b.ctx, b.org.ID, teammem.DreamFilter{ViewerUserID: b.member.ID})); len(got) != 7 {
		t.Fatalf("the owner's own personal dream hides: %d", len(got))
	}
	// Pages of two walk the same order.
	var walked []string
	f := teammem.DreamFilter{Limit: 2}
	for {
		page := must[[]teammem.Dream](t)(b.store.DreamList(b.ctx, b.org.ID, f))
		for _, d := range page {
			walked = append(walked, d.ID)
		}
		if len(page) < 2 {
			break
		}
		f.AfterCreatedAt, f.AfterID = page[1].CreatedAt, page[1].ID
	}
	if len(walked) != 7 || walked[0] != all[0].ID || walked[6] != pd.ID {
		t.Fatalf("pages walked %v", walked)
	}
	// Archived dreams show only when asked for.
	must[teammem.Dream](t)(b.store.DreamCancel(b.ctx, b.org.ID, same.ID, t0))
	must[teammem.Dream](t)(b.store.DreamArchive(b.ctx, b.org.ID, same.ID, t0))
	t2 := t0.Add(2 * time.Hour)
	canceled := []teammem.DreamStatus{teammem.DreamCanceled}
	for _, c := range []struct {
		f    teammem.DreamFilter
		want int
	}{
		{teammem.DreamFilter{}, 6},
		{teammem.DreamFilter{IncludeArchived: true}, 7},
		{teammem.DreamFilter{CreatedGT: &t2}, 2},
		{teammem.DreamFilter{CreatedGTE: &t2}, 3},
		{teammem.DreamFilter{CreatedLT: &t2}, 3},
		{teammem.DreamFilter{CreatedLTE: &t2}, 4},
		{teammem.DreamFilter{CreatedGTE: &t2, CreatedLT: &t2}, 0},
		{teammem.DreamFilter{Statuses: canceled}, 0},
		{teammem.DreamFilter{Statuses: canceled, IncludeArchived: true}, 1},
		{teammem.DreamFilter{Statuses: []teammem.DreamStatus{teammem.DreamCanceled, teammem.DreamPending}, IncludeArchived: true}, 7},
	} {
		if got := must[[]teammem.Dream](t)(b.store.DreamList(b.ctx, b.org.ID, c.f)); len(got) != c.want {
			t.Errorf("filter %+v: %d dreams, want %d", c.f, len(got), c.want)
		}
	}
}

// testDreamsAcross: the reaper's and the re-enqueue's scans span orgs.
func testDreamsAcross(t *testing.T, b *bundle) {
	sp := b.space(t, "acme/across")
	at := time.Now().UTC().Truncate(time.Microsecond)
	running := b.dream(t, sp, teammem.DreamCreateNew, at)
	pending := b.dream(t, sp, teammem.DreamCreateNew, at.Add(time.Second))
	must[teammem.Dream](t)(b.store.DreamStart(b.ctx, b.org.ID, running.ID, teammem.DreamStartParams{At: at.Add(-time.Hour)}))
	stale := must[[]teammem.Dream](t)(b.store.DreamsStale(b.ctx, at.Add(-time.Minute), 10))
	if len(stale) != 1 || stale[0].ID != running.ID || stale[0].OrgID != b.org.ID {
		t.Fatalf("stale = %+v", stale)
	}
	if stale := must[[]teammem.Dream](t)(b.store.DreamsStale(b.ctx, at.Add(-2*time.Hour), 10)); len(stale) != 0 {
		t.Fatalf("a fresh heartbeat is stale: %+v", stale)
	}
	if got := must[[]teammem.Dream](t)(b.store.DreamsPending(b.ctx, 10)); len(got) != 1 || got[0].ID != pending.ID {
		t.Fatalf("pending = %+v", got)
	}
}

// testDreamStartConcurrent: starts racing for the org's one running slot
// admit exactly one.
func testDreamStartConcurrent(t *testing.T, b *bundle) {
	sp := b.space(t, "acme/race")
	at := time.Now().UTC().Truncate(time.Microsecond)
	const n = 6
	ids := make([]string, n)
	for i := range ids {
		ids[i] = b.dream(t, sp, teammem.DreamCreateNew, at).ID
	}
	errs := make(chan error, n)
	for _, id := range ids {
		go func() {
			_, err := b.store.DreamStart(b.ctx, b.org.ID, id, teammem.DreamStartParams{At: at, MaxRunning: 1})
			errs <- err
		}()
	}
	started := 0
	for range n {
		switch err := <-errs; teammem.ErrorCode(err) {
		case "":
			started++
		case teammem.ERateLimited, teammem.EUnavailable: // refused at the limit, or the database's lock wait gave up
		default:
			t.Errorf("start: %v", err)
		}
	}
	running := must[[]teammem.Dream](t)(b.store.DreamList(b.ctx, b.org.ID, teammem.DreamFilter{Statuses: []teammem.DreamStatus{teammem.DreamRunning}}))
	if started != 1 || len(running) != 1 {
		t.Fatalf("%d starts succeeded, %d dreams run; want 1 and 1", started, len(running))
	}
}
