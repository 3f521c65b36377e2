package console

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// maxQueue is the most proposals the review queue shows on one page: each
// costs a call for its content and one per entry for the current content.
const maxQueue = 30

// changeView is one entry of a proposal as the queue shows it: the
// proposed change, and for a pending one its diff against the team
// entry as it is now.
type changeView struct {
	teammem.ProposedChange
	Lines   []diffLine
	Added   int
	Removed int
	// New reports whether the entry does not exist now; Stale whether it
	// changed since the proposal was made (approving it will conflict).
	New, Stale bool
	Findings   []teammem.PoisonFinding
}

// proposalView is one proposal of the queue.
type proposalView struct {
	teammem.Proposal
	Changes []changeView
	Pending bool
	// Store is the memory store id when the proposal is to a store made
	// through the memory stores API (its repo is hidden: no page of the
	// console shows it by slug), else "".
	Store string
}

// reviewPage is the data of /ui/review.
type reviewPage struct {
	Status    string // the filter: pending, approved, rejected or "" (all)
	Statuses  []string
	Proposals []proposalView
	CanDecide bool
	More      bool
}

// review serves /ui/review?status=: GET /v1/proposals (every proposal to
// an admin, their own to anyone else), each with its changes and, while
// pending, their diffs against the current team entries.
func (c *Console) review(w http.ResponseWriter, r *http.Request, v *viewer) error {
	status := r.URL.Query().Get("status")
	if _, ok := r.URL.Query()["status"]; !ok {
		status = string(teammem.ProposalPending)
	}
	a := c.api(v)
	q := url.Values{"limit": {strconv.Itoa(maxQueue + 1)}}
	if status != "" {
		q.Set("status", status)
	}
	var list wire.ProposalList
	if err := a.get(r.Context(), "/v1/proposals?"+q.Encode(), &list); err != nil {
		return err
	}
	pg := reviewPage{Status: status, Statuses: []string{"pending", "approved", "rejected", ""},
		CanDecide: v.can(teammem.ActTeamReview, true), More: len(list.Proposals) > maxQueue}
	if pg.More {
		list.Proposals = list.Proposals[:maxQueue]
	}
	for _, p := range list.Proposals {
		pv, err := c.proposalView(r, a, p.ID)
		if err != nil {
			return err
		}
		pg.Proposals = append(pg.Proposals, pv)
	}
	c.render(w, r, v, http.StatusOK, "review", "Review queue", pg)
	return nil
}

// proposalView reads one proposal with its content and, while it is
// pending, the current content of each entry it changes.
func (c *Console) proposalView(r *http.Request, a api, id int64) (proposalView, error) {
	var p teammem.Proposal
	if err := a.get(r.Context(), "/v1/proposals/"+strconv.FormatInt(id, 10), &p); err != nil {
		return proposalView{}, err
	}
	pv := proposalView{Proposal: p, Pending: p.Status == teammem.ProposalPending, Store: storeOf(p.Repo)}
	for _, ch := range p.Changes {
		cv := changeView{ProposedChange: ch}
		if teammem.StoreOp(ch.Op) {
			pv.Changes = append(pv.Changes, storeChangeView(cv, p.Findings))
			continue
		}
		for _, f := range p.Findings {
			if f.Path == ch.Key {
				cv.Findings = append(cv.Findings, f)
			}
		}
		// Erased content has nothing to diff: the view says it was redacted.
		if pv.Pending && !ch.Redacted {
			current, err := currentContent(r.Context(), a, p.Repo, ch.Key)
			switch teammem.ErrorCode(err) {
			case "":
			case teammem.ENotFound:
				cv.New = true
			default:
				return pv, err
			}
			sum := ""
			if !cv.New {
				sum = teammem.EntryChecksum(current)
			}
			cv.Stale = sum != ch.Base
			proposed := ch.Content
			if ch.Op == teammem.OpDelete {
				proposed = ""
			}
			cv.Lines = lineDiff(current, proposed)
			cv.Added, cv.Removed = diffCounts(cv.Lines)
		}
		pv.Changes = append(pv.Changes, cv)
	}
	return pv, nil
}

// currentContent is the current content of key in repo's team space: by
// the repo's entry route, or by the store's id for an API store's hidden
// repo. A not_found error says there is none.
func currentContent(ctx context.Context, a api, repo, key string) (string, error) {
	if store := storeOf(repo); store != "" {
		return storeContent(ctx, a, store, key)
	}
	var raw []byte
	err := a.get(ctx, entryPath(repo, key), &raw)
	return string(raw), err
}

// storeChangeView is the view of a change of a memory store's own fields:
// not an entry, so the proposed fields (JSON) are the whole change, and
// every finding is about them.
func storeChangeView(cv changeView, found []teammem.PoisonFinding) changeView {
	cv.New = cv.Op == teammem.OpStoreCreate
	cv.Lines = lineDiff("", cv.Content)
	cv.Added = len(cv.Lines)
	cv.Findings = found
	return cv
}

// decide serves POST /ui/review/approve and /ui/review/reject: POST
// /v1/proposals/{id}/approve|reject with the form's note. A stale
// proposal's approval is the API's 409, shown as such.
func (c *Console) decide(verb string) pageFunc {
	return func(w http.ResponseWriter, r *http.Request, v *viewer) error {
		id, err := strconv.ParseInt(r.PostFormValue("id"), 10, 64)
		if err != nil || id < 1 {
			return teammem.Errorf(teammem.EInvalid, "proposal id must be a number")
		}
		note := wire.ProposalDecision{Note: strings.TrimSpace(r.PostFormValue("note"))}
		path := "/v1/proposals/" + strconv.FormatInt(id, 10) + "/" + verb
		err = c.api(v).do(r.Context(), http.MethodPost, path, note, nil)
		if verb == "approve" && teammem.ErrorCode(err) == teammem.EGone {
			return teammem.Errorf(teammem.EGone, "proposal %d was not applied: content it proposed was redacted since. Reject it", id)
		}
		if verb == "approve" && teammem.ErrorCode(err) == teammem.EConflict {
			return teammem.Errorf(teammem.EConflict, "proposal %d was not applied: %s. "+
				"If its entries changed since it was proposed, reject it and ask its author to write it again on top of the current content",
				id, strings.TrimSuffix(teammem.ErrorMessage(err), "."))
		}
		if err != nil {
			return err
		}
		done := map[string]string{"approve": "approved", "reject": "rejected"}[verb]
		http.Redirect(w, r, "/ui/review?done="+done, http.StatusSeeOther)
		return nil
	}
}
