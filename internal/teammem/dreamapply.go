package teammem

import "sort"

// Apply and Discard of a create_new dream's result.
//
// Staleness is decided over the whole input store, not only the paths the
// apply touches: a dream consolidates a store as a whole (it merges
// memories, rewrites the index that lists every one), so a memory written,
// changed or deleted anywhere in the input since the dream started may
// make its result wrong, even one the result leaves alone (the index would
// not list a memory added meanwhile). Apply then answers 409 naming every
// such memory, and writes nothing; the write's own per-memory
// preconditions (the checksums at start) still guard the race between that
// check and the commit.

// DreamStale lists, sorted, the keys of the input whose live state differs
// from base (the input's state when the dream started, Dream.Base): a
// memory changed or deleted since, or one written since that base lacks.
// None: the input is as the dream saw it.
func DreamStale(base map[string]string, live []Entry) []string {
	var stale []string
	seen := make(map[string]bool, len(live))
	for _, e := range live {
		seen[e.Key] = true
		if sum, ok := base[e.Key]; !ok || sum != e.Checksum {
			stale = append(stale, e.Key)
		}
	}
	for k := range base {
		if !seen[k] {
			stale = append(stale, k)
		}
	}
	sort.Strings(stale)
	return stale
}

// DreamApplyRequest is the one write that applies changes to the input,
// each with its precondition from base: an upsert or delete must find the
// checksum the memory had when the dream started, an added memory must
// find no memory at its path.
func DreamApplyRequest(base map[string]string, changes []DreamChange) WriteRequest {
	var req WriteRequest
	for _, c := range changes {
		b := base[c.Key] // "" for a path the input did not have: must not exist
		if c.HasAfter {
			req.Upserts = append(req.Upserts, Upsert{Key: c.Key, Content: c.After, Base: &b})
		} else {
			req.Deletes = append(req.Deletes, Delete{Key: c.Key, Base: &b})
		}
	}
	return req
}

// DreamReviewCheck is the rule of moving d's review to to (ReviewApplied
// or ReviewDiscarded): done when it is there already (the request is
// answered as it was, changing nothing); EInvalid, saying why, when d is
// not a completed create_new dream pending review.
func DreamReviewCheck(d Dream, to DreamReviewState) (done bool, err error) {
	verb := map[DreamReviewState]string{ReviewApplied: "applied", ReviewDiscarded: "discarded"}[to]
	switch {
	case d.Behavior != DreamCreateNew:
		return false, Errorf(EInvalid, "dream %s is an update_existing dream: it wrote into its store already; only a create_new dream is %s", d.ID, verb)
	case d.Review.State == to:
		return true, nil
	case d.Status != DreamCompleted:
		return false, Errorf(EInvalid, "dream %s is %s: only a completed dream is %s", d.ID, d.Status, verb)
	case d.Review.State != ReviewPending:
		return false, Errorf(EInvalid, "dream %s was %s already: it cannot be %s too", d.ID, d.Review.State, verb)
	case d.OutputStoreUID == "":
		return false, Errorf(EInvalid, "dream %s has no output store to review", d.ID)
	}
	return false, nil
}

// DreamStaleError is Apply's refusal when the input changed since the
// dream started: EConflict with the changed memories' paths in details
// "changed_paths".
func DreamStaleError(d Dream, keys []string) *Error {
	paths := make([]string, len(keys))
	for i, k := range keys {
		paths[i] = MemoryPath(k)
	}
	return Errorf(EConflict, "memory store %s changed since dream %s started; nothing was written: "+
		"discard this dream and dream again", d.InputStoreID(), d.ID).
		WithDetails(map[string]any{"changed_paths": paths})
}
