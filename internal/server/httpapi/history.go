package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/teammem"
)

// Bounding and erasing history: redacting one version of an entry, purging
// a space's history when it is deleted, the retention sweep of Run and the
// org settings that bound it.

// redactResponse is the body of POST .../history/{version}/redact: the
// version as it is stored now, without content or checksum.
type redactResponse struct {
	Key      string               `json:"key"`
	Redacted teammem.EntryVersion `json:"redacted"`
}

// redactVersion serves POST .../entries/{key}/history/{version}/redact: the
// version's content is erased for good, its row stays. On the team space
// this is moderation (admins and owners); the personal space is always the
// caller's own, the author of every version in it.
func (s *Server) redactVersion(w http.ResponseWriter, r *http.Request) error {
	// Only a version from 1 and a key name a version: any other path of
	// this shape is no route, as a POST to an entry path is.
	version, err := strconv.ParseInt(chi.URLParam(r, "version"), 10, 64)
	if err != nil || version < 1 || chi.URLParam(r, keyParam) == "" {
		return teammem.Errorf(teammem.ENotFound, "no such route")
	}
	key, err := entryKey(r)
	if err != nil {
		return err
	}
	sr, err := s.resolveSpace(r, true)
	if err != nil {
		return err
	}
	if sr.scope == teammem.ScopeTeam {
		if err := teammem.Authorize(sr.p, teammem.ActTeamModerate, true); err != nil {
			return err
		}
	}
	notFound := teammem.Errorf(teammem.ENotFound, "entry %q has no version %d", key, version)
	if sr.space.ID == 0 {
		return notFound
	}
	p := teammem.VersionRedactParams{Key: key, Version: version, By: sr.p.User.ID, At: time.Now().UTC().Truncate(time.Microsecond)}
	v, changed, err := s.store.VersionRedact(r.Context(), sr.p.Org.ID, sr.space.ID, p)
	switch {
	case teammem.ErrorCode(err) == teammem.ENotFound:
		return notFound
	case err != nil && !changed:
		return err
	}
	if changed {
		// Audited even when the scrub after the commit failed: the content
		// is out of every query already. Never the content, of course.
		s.audit(r.Context(), sr.p, "version.redact", sr.slug, key, map[string]any{"scope": sr.scope, "version": version, "op": v.Op})
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, redactResponse{Key: key, Redacted: v})
	return nil
}

// purgeParam reads DELETE .../{scope}?purge=: "history" also deletes every
// recorded version of the space.
func purgeParam(r *http.Request) (bool, error) {
	switch v := r.URL.Query().Get("purge"); v {
	case "":
		return false, nil
	case "history":
		return true, nil
	default:
		return false, teammem.Errorf(teammem.EInvalid, `purge must be "history" or absent, not %q`, v)
	}
}

// purgeHistory deletes every version of a space (none when it was never
// written) and says so in details, for the audit log.
func (s *Server) purgeHistory(ctx context.Context, p teammem.Principal, spaceID int64, details map[string]any) error {
	details["purge"] = "history"
	if spaceID == 0 {
		details["versions"] = 0
		return nil
	}
	n, err := s.store.SpaceVersionsPurge(ctx, p.Org.ID, spaceID)
	details["versions"] = n
	return err
}

// sweepRetention runs one retention sweep, logging a failure.
func (s *Server) sweepRetention(ctx context.Context) {
	if err := s.SweepRetention(ctx); err != nil {
		s.log.WarnContext(ctx, "retention sweep failed", "error", err.Error())
	}
}

// SweepRetention runs one retention sweep: expired tombstones, then each
// org's history beyond its retention. The job queue runs it on one replica
// (internal/server/jobs), so when it purged tombstones it tells every
// replica to forget its cached heads. It returns the sweep's error, after
// logging what it did purge.
func (s *Server) SweepRetention(ctx context.Context) error {
	res, err := s.retention.Sweep(ctx)
	if res.Tombstones > 0 {
		// Purged tombstones move spaces' purge marks, which cached heads lack.
		s.cache.reset()
		if perr := s.events.Publish(context.WithoutCancel(ctx), events.Event{Kind: events.KindReset}); perr != nil {
			s.log.WarnContext(ctx, "publishing a cache reset failed", "error", perr.Error())
		}
	}
	if res.Tombstones > 0 || res.Versions > 0 {
		s.log.InfoContext(ctx, "retention sweep", "tombstones", res.Tombstones, "versions", res.Versions, "batches", res.Batches, "orgs", res.Orgs)
	}
	return err
}

// patchHistory applies b's history retention settings to set and returns
// the names of the fields it set.
func patchHistory(set *teammem.OrgSettings, b orgPatch) ([]string, error) {
	var changed []string
	if b.HistoryRetentionDays != nil {
		if n := *b.HistoryRetentionDays; n < 0 || n > teammem.MaxHistoryRetentionDays {
			return nil, teammem.Errorf(teammem.EInvalid, "history_retention_days must be between 0 (server default) and %d",
				teammem.MaxHistoryRetentionDays)
		}
		set.HistoryRetentionDays = *b.HistoryRetentionDays
		changed = append(changed, "history_retention_days")
	}
	if b.HistoryMaxVersions != nil {
		if n := *b.HistoryMaxVersions; n < 0 || n > teammem.MaxHistoryMaxVersions {
			return nil, teammem.Errorf(teammem.EInvalid, "history_max_versions must be between 0 (server default) and %d",
				teammem.MaxHistoryMaxVersions)
		}
		set.HistoryMaxVersions = *b.HistoryMaxVersions
		changed = append(changed, "history_max_versions")
	}
	return changed, nil
}
