package teammem

// VersionPurger is the SQL a store runs for PurgeVersions; PurgeVersions
// owns the order (age, then count) and the batching, which both drivers
// share.
type VersionPurger struct {
	// NextAged returns the ids of the next at most batch versions created
	// before the cutoff, oldest first, each call going on where the last
	// stopped.
	NextAged func(batch int) ([]int64, error)
	// Crowded lists the entries (space and key) with more than keep versions.
	Crowded func(keep int) ([]EntryRef, error)
	// Surplus lists the ids of an entry's versions beyond its keep newest.
	Surplus func(e EntryRef, keep int) ([]int64, error)
	// Delete deletes, in one transaction, those of ids that are not their
	// entry's newest version, and says how many it deleted.
	Delete func(ids []int64) (int, error)
}

// EntryRef names an entry: its space and its key (a SpaceKey names a space as a request does).
type EntryRef struct {
	SpaceID int64
	Key     string
}

// PurgeVersions deletes the versions p names through q: those older than
// p.Before first, batch by batch, then each entry's beyond p.MaxPerKey,
// gathered across entries into full batches. An entry's newest version is
// never deleted (q.Delete keeps it), so a purge never loses a live entry.
func PurgeVersions(p VersionsPurgeParams, q VersionPurger) (VersionsPurged, error) {
	var res VersionsPurged
	batch := p.BatchSize()
	del := func(ids []int64) error {
		n, err := q.Delete(ids)
		res.Versions += n
		res.Batches++
		return err
	}
	if !p.Before.IsZero() {
		for {
			ids, err := q.NextAged(batch)
			if err != nil {
				return res, err
			}
			if len(ids) > 0 {
				if err := del(ids); err != nil {
					return res, err
				}
			}
			if len(ids) < batch {
				break
			}
		}
	}
	if p.MaxPerKey > 0 {
		crowded, err := q.Crowded(p.MaxPerKey)
		if err != nil {
			return res, err
		}
		var pending []int64
		for _, e := range crowded {
			ids, err := q.Surplus(e, p.MaxPerKey)
			if err != nil {
				return res, err
			}
			for pending = append(pending, ids...); len(pending) >= batch; pending = pending[batch:] {
				if err := del(pending[:batch]); err != nil {
					return res, err
				}
			}
		}
		if len(pending) > 0 {
			if err := del(pending); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}
