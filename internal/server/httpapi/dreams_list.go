package httpapi

import (
	"net/http"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// listDreams serves GET /v1/dreams: the dreams of stores the caller can
// read, newest first, in cursor pages.
func (s *Server) listDreams(w http.ResponseWriter, r *http.Request) error {
	p := principal(r)
	if err := teammem.Authorize(p, teammem.ActTeamRead, false); err != nil {
		return err
	}
	f, err := dreamFilter(r)
	if err != nil {
		return err
	}
	f.ViewerUserID = p.User.ID
	if teammem.Authorize(p, teammem.ActPersonalRead, false) != nil {
		f.ViewerUserID = -1 // viewers see no personal stores, nor their dreams
	}
	want := f.Limit
	f.Limit++
	list, err := s.store.DreamList(r.Context(), p.Org.ID, f)
	if err != nil {
		return err
	}
	page := wire.DreamPage{Data: []wire.Dream{}}
	for i, d := range list {
		if i == want {
			next := dreamCursor(list[i-1])
			page.NextPage = &next
			break
		}
		page.Data = append(page.Data, dreamOf(d))
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// dreamFilter reads the list's query: include_archived, limit (1–100),
// page, created_at[gt|lt|gte|lte] and statuses, which the SDKs send as
// statuses[]=… (Go) or statuses=… (repeated, or comma-separated).
func dreamFilter(r *http.Request) (teammem.DreamFilter, error) {
	q := r.URL.Query()
	var f teammem.DreamFilter
	var err error
	switch v := q.Get("include_archived"); v {
	case "", "false":
	case "true":
		f.IncludeArchived = true
	default:
		return f, teammem.Errorf(teammem.EInvalid, "include_archived must be true or false")
	}
	if f.Limit, err = queryInt(r, "limit", 20, 1, 100); err != nil {
		return f, err
	}
	if page := q.Get("page"); page != "" {
		if err := parseDreamCursor(page, &f); err != nil {
			return f, err
		}
	}
	for name, into := range map[string]**time.Time{"created_at[gt]": &f.CreatedGT, "created_at[lt]": &f.CreatedLT,
		"created_at[gte]": &f.CreatedGTE, "created_at[lte]": &f.CreatedLTE} {
		if *into, err = queryTime(r, name); err != nil {
			return f, err
		}
	}
	for _, v := range append(q["statuses[]"], q["statuses"]...) {
		for _, st := range strings.Split(v, ",") {
			if status := teammem.DreamStatus(strings.TrimSpace(st)); status.Valid() {
				f.Statuses = append(f.Statuses, status)
			} else {
				return f, teammem.Errorf(teammem.EInvalid, "statuses must be among pending, running, completed, failed and canceled")
			}
		}
	}
	return f, nil
}
