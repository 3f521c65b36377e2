package console

import (
	"net/http"
	"strconv"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// versionRow is one version of an entry's history, with what the viewer
// may do with it.
type versionRow struct {
	teammem.EntryVersion
	Live       bool // holds the entry's current content
	CanRestore bool
	CanRedact  bool
}

// entryPage is the data of /ui/entry.
type entryPage struct {
	Repo, Key   string
	Content     string
	Front       teammem.Frontmatter
	HasFront    bool
	Body        any // template.HTML
	Versions    []versionRow
	CanModerate bool
	Diff        *diffView
	// Findings are the poisoning checks' findings on the live content, as
	// its version recorded them.
	Findings []teammem.PoisonFinding
}

// diffView is a diff between two versions of an entry.
type diffView struct {
	From, To int64
	Lines    []diffLine
	Added    int
	Removed  int
	Note     string
}

// entry serves /ui/entry?repo=&key=[&from=&to=]: the entry's frontmatter,
// rendered body and history, and a diff of two versions when asked.
func (c *Console) entry(w http.ResponseWriter, r *http.Request, v *viewer) error {
	q := r.URL.Query()
	repo, key := q.Get("repo"), q.Get("key")
	a := c.api(v)
	pg := entryPage{Repo: repo, Key: key, CanModerate: v.can(teammem.ActTeamModerate, true)}
	var raw []byte
	err := a.get(r.Context(), entryPath(repo, key), &raw)
	switch teammem.ErrorCode(err) {
	case "":
		pg.Content = string(raw)
		var body string
		pg.Front, body, pg.HasFront = teammem.ParseFrontmatter(pg.Content)
		pg.Body = renderMarkdown(repo, key, body)
	case teammem.ENotFound: // deleted: the history may still be there
	default:
		return err
	}
	var hist wire.History
	if err := a.get(r.Context(), entryPath(repo, key)+"/history", &hist); err != nil {
		return err
	}
	liveSum := ""
	if pg.Body != nil {
		liveSum = teammem.EntryChecksum(pg.Content)
	}
	for _, ver := range hist.Versions {
		row := versionRow{EntryVersion: ver, Live: ver.Checksum == liveSum && liveSum != ""}
		hasContent := ver.Op != teammem.OpDelete && !ver.Redacted()
		row.CanRestore = pg.CanModerate && hasContent && !row.Live
		row.CanRedact = pg.CanModerate && hasContent && !row.Live
		if row.Live && pg.Findings == nil {
			pg.Findings = ver.Findings
		}
		pg.Versions = append(pg.Versions, row)
	}
	if q.Get("from") != "" || q.Get("to") != "" {
		d, err := c.diff(r, v, repo, key, q.Get("from"), q.Get("to"))
		if err != nil {
			return err
		}
		pg.Diff = d
	}
	c.render(w, r, v, http.StatusOK, "entry", key, pg)
	return nil
}

// diff compares two recorded versions of an entry. The API has no route
// for an old version's content, so it is read from the store, after the
// same authorization as the history the API just served.
func (c *Console) diff(r *http.Request, v *viewer, repo, key, from, to string) (*diffView, error) {
	f, err1 := strconv.ParseInt(from, 10, 64)
	t, err2 := strconv.ParseInt(to, 10, 64)
	if err1 != nil || err2 != nil || f < 1 || t < 1 {
		return nil, teammem.Errorf(teammem.EInvalid, "choose two versions to compare")
	}
	if err := teammem.Authorize(v.p, teammem.ActTeamRead, false); err != nil {
		return nil, err
	}
	ctx := r.Context()
	rp, err := c.cfg.Store.RepoGet(ctx, v.p.Org.ID, repo)
	if err != nil {
		return nil, err
	}
	sp, err := c.cfg.Store.SpaceGet(ctx, v.p.Org.ID, teammem.SpaceRef{RepoID: rp.ID, Scope: teammem.ScopeTeam})
	if err != nil {
		return nil, err
	}
	content := func(n int64) (string, string, error) {
		ver, err := c.cfg.Store.EntryVersionGet(ctx, v.p.Org.ID, sp.ID, key, n)
		if teammem.ErrorCode(err) == teammem.ENotFound {
			return "", "", teammem.Errorf(teammem.ENotFound, "entry %q has no version %d", key, n)
		}
		switch {
		case err != nil:
			return "", "", err
		case ver.Redacted():
			return "", "version " + strconv.FormatInt(n, 10) + " was redacted; it shows as empty. ", nil
		case ver.Op == teammem.OpDelete:
			return "", "version " + strconv.FormatInt(n, 10) + " is a deletion; it shows as empty. ", nil
		}
		return ver.Content, "", nil
	}
	a, noteA, err := content(f)
	if err != nil {
		return nil, err
	}
	b, noteB, err := content(t)
	if err != nil {
		return nil, err
	}
	d := &diffView{From: f, To: t, Lines: lineDiff(a, b), Note: noteA + noteB}
	for _, l := range d.Lines {
		switch l.Op {
		case '+':
			d.Added++
		case '-':
			d.Removed++
		}
	}
	return d, nil
}

// restore serves POST /ui/entry/restore: POST .../restore of the API.
func (c *Console) restore(w http.ResponseWriter, r *http.Request, v *viewer) error {
	repo, key := r.PostFormValue("repo"), r.PostFormValue("key")
	n, err := strconv.ParseInt(r.PostFormValue("version"), 10, 64)
	if err != nil {
		return teammem.Errorf(teammem.EInvalid, "version must be a number")
	}
	if err := c.api(v).do(r.Context(), http.MethodPost, entryPath(repo, key)+"/restore", wire.RestoreRequest{Version: n}, nil); err != nil {
		return err
	}
	http.Redirect(w, r, entryURL(repo, key, "&done=restored"), http.StatusSeeOther)
	return nil
}

// redact serves POST /ui/entry/redact: POST .../history/{v}/redact.
func (c *Console) redact(w http.ResponseWriter, r *http.Request, v *viewer) error {
	repo, key := r.PostFormValue("repo"), r.PostFormValue("key")
	n, err := strconv.ParseInt(r.PostFormValue("version"), 10, 64)
	if err != nil {
		return teammem.Errorf(teammem.EInvalid, "version must be a number")
	}
	path := entryPath(repo, key) + "/history/" + strconv.FormatInt(n, 10) + "/redact"
	if err := c.api(v).do(r.Context(), http.MethodPost, path, nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, entryURL(repo, key, "&done=redacted"), http.StatusSeeOther)
	return nil
}

// deleteEntry serves POST /ui/entry/delete: DELETE .../entries/{key}. On
// the team space the API lets members delete too; the console offers it
// to moderators only, and the API decides.
func (c *Console) deleteEntry(w http.ResponseWriter, r *http.Request, v *viewer) error {
	repo, key := r.PostFormValue("repo"), r.PostFormValue("key")
	if err := teammem.Authorize(v.p, teammem.ActTeamModerate, true); err != nil {
		return err
	}
	if err := c.api(v).do(r.Context(), http.MethodDelete, entryPath(repo, key), nil, nil); err != nil {
		return err
	}
	http.Redirect(w, r, entryURL(repo, key, "&done=deleted"), http.StatusSeeOther)
	return nil
}
