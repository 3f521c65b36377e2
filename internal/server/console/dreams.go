package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// The Dreams page: the org's dreams with status, model, usage and review
// state, and one dream's per-memory diff of its output against its input
// with Apply and Discard (POST /v1/dreams/{id}/apply|discard). Like the
// review queue's decisions, it is for admins and owners.

// maxDreams is the most dreams the list shows.
const maxDreams = 50

// dreamsPage is the data of /ui/dreams.
type dreamsPage struct {
	Dreams []wire.Dream
	More   bool
}

// dreamChangeView is one memory of a dream's diff, with its line diff.
type dreamChangeView struct {
	wire.DreamChange
	Lines          []diffLine
	Added, Removed int
}

// dreamPage is the data of /ui/dream.
type dreamPage struct {
	Dream   wire.Dream
	Changes []dreamChangeView
	// HasDiff reports whether the dream has an output to compare.
	HasDiff bool
	// CanReview reports whether Apply and Discard are offered: a completed
	// create_new dream pending review.
	CanReview bool
	// Stale lists the memories an Apply found changed since the dream
	// started (its 409), "" when none.
	Stale []string
	Error string
}

// requireDreams refuses the Dreams pages to anyone but admins and owners.
func requireDreams(v *viewer) error {
	if !v.can(teammem.ActTeamReview, true) {
		return teammem.Errorf(teammem.EForbidden, "the Dreams page is for admins and owners, who decide the review queue")
	}
	return nil
}

// dreams serves /ui/dreams: GET /v1/dreams, newest first, archived ones too.
func (c *Console) dreams(w http.ResponseWriter, r *http.Request, v *viewer) error {
	if err := requireDreams(v); err != nil {
		return err
	}
	var page wire.DreamPage
	if err := c.api(v).get(r.Context(), "/v1/dreams?include_archived=true&limit=100", &page); err != nil {
		return err
	}
	pg := dreamsPage{Dreams: page.Data, More: len(page.Data) > maxDreams || page.NextPage != nil}
	if len(pg.Dreams) > maxDreams {
		pg.Dreams = pg.Dreams[:maxDreams]
	}
	c.render(w, r, v, http.StatusOK, "dreams", "Dreams", pg)
	return nil
}

// dream serves /ui/dream?id=: the dream and, once it has an output, its
// diff.
func (c *Console) dream(w http.ResponseWriter, r *http.Request, v *viewer) error {
	if err := requireDreams(v); err != nil {
		return err
	}
	pg, err := c.dreamView(r, v, r.URL.Query().Get("id"))
	if err != nil {
		return err
	}
	c.render(w, r, v, http.StatusOK, "dream", "Dream "+pg.Dream.ID, pg)
	return nil
}

// dreamView reads a dream and its diff.
func (c *Console) dreamView(r *http.Request, v *viewer, id string) (dreamPage, error) {
	if !teammem.ValidDreamID(id) {
		return dreamPage{}, teammem.Errorf(teammem.ENotFound, "no such dream")
	}
	a := c.api(v)
	var pg dreamPage
	if err := a.get(r.Context(), "/v1/dreams/"+id, &pg.Dream); err != nil {
		return pg, err
	}
	d := pg.Dream
	pg.CanReview = d.Status == wire.DreamCompleted && d.OutputBehavior.Type == wire.BehaviorCreateNew && d.Review.State == wire.ReviewPending
	if len(d.Outputs) == 0 || d.OutputBehavior.Type != wire.BehaviorCreateNew {
		return pg, nil
	}
	var diff wire.DreamDiff
	if err := a.get(r.Context(), "/v1/dreams/"+id+"/diff", &diff); err != nil {
		return pg, err
	}
	pg.HasDiff = true
	for _, ch := range diff.Changes {
		cv := dreamChangeView{DreamChange: ch}
		cv.Lines = lineDiff(deref(ch.Before), deref(ch.After))
		cv.Added, cv.Removed = diffCounts(cv.Lines)
		pg.Changes = append(pg.Changes, cv)
	}
	return pg, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// reviewDream serves POST /ui/dream/apply and /ui/dream/discard. A stale
// Apply (the API's 409) renders the dream again with the memories that
// changed; an Apply held for review says so.
func (c *Console) reviewDream(verb string) pageFunc {
	return func(w http.ResponseWriter, r *http.Request, v *viewer) error {
		if err := requireDreams(v); err != nil {
			return err
		}
		id := r.PostFormValue("id")
		if !teammem.ValidDreamID(id) {
			return teammem.Errorf(teammem.EInvalid, "dream id must be drm_…")
		}
		var d wire.Dream
		err := c.api(v).do(r.Context(), http.MethodPost, "/v1/dreams/"+id+"/"+verb, struct{}{}, &d)
		if paths, ok := teammem.ErrorDetails(err)["changed_paths"].([]string); ok && verb == "apply" {
			pg, verr := c.dreamView(r, v, id)
			if verr != nil {
				return verr
			}
			pg.Stale, pg.Error = paths, strings.TrimSuffix(teammem.ErrorMessage(err), ".")+"."
			c.render(w, r, v, http.StatusConflict, "dream", "Dream "+id, pg)
			return nil
		}
		if err != nil {
			return err
		}
		done := map[string]string{"apply": "dream_applied", "discard": "dream_discarded"}[verb]
		if verb == "apply" && d.Review.State == wire.ReviewPending {
			done = "dream_held"
		}
		http.Redirect(w, r, "/ui/dream?id="+url.QueryEscape(id)+"&done="+done, http.StatusSeeOther)
		return nil
	}
}
