package memsync

import (
	"fmt"
	"slices"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// The mass-delete guard: one sync may delete at most max(MassDeleteFloor,
// MassDeleteShare of the tracked files) on either side unless the user says
// so (Engine.AllowMassDelete). A wiped directory, a bad checkout or a broken
// server then costs a warning, not a team's memory.
const (
	MassDeleteFloor = 50
	MassDeleteShare = 0.10
)

// DeleteLimit is the most deletions one sync may make, given how many files
// it tracks.
func DeleteLimit(tracked int) int {
	return max(MassDeleteFloor, int(float64(tracked)*MassDeleteShare))
}

// guardPulledDeletes returns the changes to apply: all of them, or, when
// they would remove more local files than the guard allows, only the
// upserts. The held deletions are reported and remembered for status; the
// mirror then stays at its version, so the next sync meets them again.
func (e *Engine) guardPulledDeletes(scope teammem.Scope, ss *ScopeState, changes []wire.Change, rep *Report) []wire.Change {
	root, _ := e.root(scope)
	var removing []string
	for _, c := range changes {
		if c.Op != "delete" || teammem.ValidateKey(c.Key) != nil {
			continue
		}
		if _, exists, err := readLocal(root, c.Key); err == nil && exists {
			removing = append(removing, c.Key)
		}
	}
	limit := DeleteLimit(len(ss.Base))
	if len(removing) <= limit || e.AllowMassDelete {
		ss.HeldDeletes = nil
		return changes
	}
	slices.Sort(removing)
	rep.HeldLocalDeletes, rep.DeleteLimit, ss.HeldDeletes = removing, limit, removing
	return slices.DeleteFunc(slices.Clone(changes), func(c wire.Change) bool { return c.Op == "delete" })
}

// guardPushedDeletes drops a push's deletions when they are more than the
// guard allows, reporting them; the files stay on the server.
func (e *Engine) guardPushedDeletes(ss *ScopeState, p *pushPlan, rep *Report) {
	limit := DeleteLimit(len(ss.Base))
	if len(p.deletes) <= limit || e.AllowMassDelete {
		return
	}
	for _, d := range p.deletes {
		rep.HeldRemoteDeletes = append(rep.HeldRemoteDeletes, d.Key)
	}
	rep.DeleteLimit, p.deletes = limit, nil
}

// Notices returns the lines a person must see about a sync beyond its
// counts: a reconciled server, deletions the guard held (how many, which,
// and the flag that lets them go), files the server holds for review,
// merges that kept both sides of an overlapping edit (here, or on the
// machine a pulled merge came from). Every front end (sync, watch, hooks)
// prints them.
func (r *Report) Notices() []string {
	var out []string
	if r.Reset != "" {
		out = append(out, ResetMessage(r.Reset))
	}
	if n := len(r.HeldLocalDeletes); n > 0 {
		out = append(out, fmt.Sprintf("held %d deletions from the server: more than the mass-delete guard allows (%d); the files stay here until you run %s: %s",
			n, r.DeleteLimit, ReleaseDeletes, KeyList(r.HeldLocalDeletes)))
	}
	if n := len(r.HeldRemoteDeletes); n > 0 {
		out = append(out, fmt.Sprintf("held %d local deletions: more than the mass-delete guard allows (%d); the files stay on the server until you run %s: %s",
			n, r.DeleteLimit, ReleaseDeletes, KeyList(r.HeldRemoteDeletes)))
	}
	if len(r.HeldForReview) > 0 {
		out = append(out, "held for review by the server (an admin decides; the files stay here and are not sent again until they change): "+
			KeyList(r.HeldForReview))
	}
	for _, k := range r.Overlapped {
		if slices.Contains(r.PulledOverlaps, k) {
			out = append(out, "pulled a merge with overlap: review "+k+" (another machine merged edits of the same lines and kept both)")
			continue
		}
		out = append(out, "merged with overlap: review "+k+" (both sides changed the same lines; both were kept)")
	}
	return out
}

// HeldDeletes counts the deletions the guard held, on either side.
func (r *Report) HeldDeletes() int { return len(r.HeldLocalDeletes) + len(r.HeldRemoteDeletes) }

// ReleaseDeletes is the command that lets held deletions go.
const ReleaseDeletes = "teammem sync --allow-mass-delete"

// keyListMax is how many keys KeyList names before it counts the rest.
const keyListMax = 10

// KeyList names keys for a line of output: all of them, or the first
// keyListMax and how many more (`teammem status --json` lists them all).
func KeyList(keys []string) string {
	if len(keys) <= keyListMax {
		return strings.Join(keys, ", ")
	}
	return fmt.Sprintf("%s and %d more (teammem status --json lists them all)", strings.Join(keys[:keyListMax], ", "), len(keys)-keyListMax)
}
