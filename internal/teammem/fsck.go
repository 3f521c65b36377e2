package teammem

import (
	"context"
	"fmt"
)

// FsckProblem is one inconsistency Fsck found.
type FsckProblem struct {
	SpaceID int64
	OrgID   int64
	Message string
}

// FsckReport summarises a check of every space.
type FsckReport struct {
	Spaces, Entries int
	Problems        []FsckProblem
}

// Fsck recomputes every space's checksum, entry count and byte total from
// its entries, and every live entry's checksum from its content, and reports
// each mismatch with the stored head.
func Fsck(ctx context.Context, st Store) (FsckReport, error) {
	var rep FsckReport
	spaces, err := st.SpaceList(ctx)
	if err != nil {
		return rep, err
	}
	for _, sp := range spaces {
		rep.Spaces++
		entries, err := st.EntriesList(ctx, sp.OrgID, sp.ID, true)
		if err != nil {
			return rep, fmt.Errorf("space %d: %w", sp.ID, err)
		}
		problem := func(format string, args ...any) {
			rep.Problems = append(rep.Problems, FsckProblem{SpaceID: sp.ID, OrgID: sp.OrgID, Message: fmt.Sprintf(format, args...)})
		}
		sums := make(map[string]string, len(entries))
		var bytes int64
		for _, e := range entries {
			rep.Entries++
			if got := EntryChecksum(e.Content); got != e.Checksum {
				problem("entry %q: stored checksum %s, content hashes to %s", e.Key, e.Checksum, got)
			}
			if e.Size != len(e.Content) {
				problem("entry %q: stored size %d, content is %d bytes", e.Key, e.Size, len(e.Content))
			}
			if e.Version > sp.Version {
				problem("entry %q: version %d is ahead of the space's %d", e.Key, e.Version, sp.Version)
			}
			sums[e.Key] = EntryChecksum(e.Content)
			bytes += int64(len(e.Content))
		}
		if want := SpaceChecksum(sums); want != sp.Checksum {
			problem("checksum %s, entries give %s", sp.Checksum, want)
		}
		if sp.EntryCount != len(entries) || sp.TotalBytes != bytes {
			problem("head says %d entries / %d bytes, entries give %d / %d", sp.EntryCount, sp.TotalBytes, len(entries), bytes)
		}
	}
	return rep, nil
}
