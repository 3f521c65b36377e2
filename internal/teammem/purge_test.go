package teammem

import (
	"slices"
	"testing"
	"time"
)

// TestPurgeVersionsBatches: aged versions go page by page until a short
// page, then surplus versions are gathered across entries into full
// batches, the rest in one last batch.
func TestPurgeVersionsBatches(t *testing.T) {
	aged := []int64{1, 2, 3, 4, 5}
	surplus := map[string][]int64{"a": {10, 11}, "b": {12}, "c": {13, 14}}
	var deleted [][]int64
	res, err := PurgeVersions(VersionsPurgeParams{Before: time.Unix(1, 0), MaxPerKey: 3, Batch: 2}, VersionPurger{
		NextAged: func(batch int) ([]int64, error) {
			n := min(batch, len(aged))
			page := aged[:n]
			aged = aged[n:]
			return page, nil
		},
		Crowded: func(keep int) ([]EntryRef, error) {
			return []EntryRef{{1, "a"}, {1, "b"}, {2, "c"}}, nil
		},
		Surplus: func(e EntryRef, keep int) ([]int64, error) { return surplus[e.Key], nil },
		Delete: func(ids []int64) (int, error) {
			deleted = append(deleted, slices.Clone(ids))
			return len(ids), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{1, 2}, {3, 4}, {5}, {10, 11}, {12, 13}, {14}}
	if !slices.EqualFunc(deleted, want, slices.Equal) {
		t.Errorf("batches %v, want %v", deleted, want)
	}
	if res != (VersionsPurged{Versions: 10, Batches: 6}) {
		t.Errorf("result %+v, want 10 versions in 6 batches", res)
	}
}
