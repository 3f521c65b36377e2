package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
)

// layoutData is what the layout template sees; Data is the page's own.
type layoutData struct {
	Title string
	User  *teammem.User
	Org   string
	CSRF  string
	Nav   []navItem
	Flash string
	Data  any
}

// navItem is one link of the top navigation.
type navItem struct {
	Href, Label string
	Current     bool
}

// navLinks lists the pages in the navigation and the action each needs:
// a viewer sees only the pages they may open. The review queue is for
// those who can propose (their own proposals) or decide (every one).
var navLinks = []struct {
	href, label string
	needs       teammem.Action
}{
	{"/ui/", "Overview", teammem.ActOrgRead},
	{"/ui/review", "Review queue", teammem.ActTeamWrite},
	{"/ui/dreams", "Dreams", teammem.ActTeamReview},
	{"/ui/users", "Users", teammem.ActUsersRead},
	{"/ui/keys", "Keys", teammem.ActKeysOwn},
	{"/ui/audit", "Audit log", teammem.ActAuditRead},
	{"/ui/settings", "Settings", teammem.ActOrgRead},
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"whenp": func(t *time.Time) string {
		if t == nil {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04 UTC")
	},
	"bytes": func(n any) string { return teammem.FormatFileSize(toInt(n)) },
	"dialect": func(api string) string {
		if l, ok := dialects[api]; ok {
			return l
		}
		return api
	},
	"findingsAt": findingsAt,
	"treeArgs": func(repo string, nodes []*treeNode) any {
		return struct {
			Repo  string
			Nodes []*treeNode
		}{repo, nodes}
	},
}

// dialects words the api of a version or proposal.
var dialects = map[string]string{
	"v1":                 "teammem /v1",
	"claude_code":        "Claude Code team memory",
	"memory_stores":      "Memory Stores API",
	"claude_code_memory": "Claude Code memory stores",
	"dream":              "a dream's Apply",
	"mcp":                "MCP",
}

// findingsAt returns the findings on key.
func findingsAt(found []teammem.PoisonFinding, key string) []teammem.PoisonFinding {
	var out []teammem.PoisonFinding
	for _, f := range found {
		if f.Path == key {
			out = append(out, f)
		}
	}
	return out
}

func toInt(n any) int {
	switch v := n.(type) {
	case int:
		return v
	case int64:
		return int(v)
	}
	return 0
}

// parsePages parses each page template with the layout.
func parsePages() map[string]*template.Template {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(path.Base(n), ".html")
		if base == "layout" {
			continue
		}
		pages[base] = template.Must(template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n))
	}
	return pages
}

// render writes page name inside the layout.
func (c *Console) render(w http.ResponseWriter, r *http.Request, v *viewer, status int, name, title string, data any) {
	ld := layoutData{Title: title, Data: data, Flash: flashes[r.URL.Query().Get("done")]}
	if v != nil {
		u := v.p.User
		ld.User, ld.Org, ld.CSRF = &u, v.p.Org.Slug, v.sess.CSRF
		for _, l := range navLinks {
			if v.can(l.needs, false) {
				ld.Nav = append(ld.Nav, navItem{Href: l.href, Label: l.label, Current: r.URL.Path == l.href})
			}
		}
	}
	var buf bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&buf, "layout", ld); err != nil {
		c.cfg.Log.ErrorContext(r.Context(), "console template failed", "page", name, "error", err.Error())
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// flashes words the done= of a page reached after a change; anything else
// shows nothing, so that a link cannot put words on the page.
var flashes = map[string]string{
	"restored":        "The version was restored as a new version.",
	"redacted":        "The version's content was erased; its row stays in the history.",
	"deleted":         "The entry was deleted (a tombstone remembers it).",
	"saved":           "Settings saved.",
	"user":            "User saved.",
	"revoked":         "Key revoked.",
	"approved":        "The proposal was approved and applied to the team space.",
	"rejected":        "The proposal was rejected; it stays in the queue's history and the audit log.",
	"dream_applied":   "The dream's result was written into its input store.",
	"dream_discarded": "The dream's result was discarded; its output store is archived.",
	"dream_held":      "The dream's result was held for review as one proposal (team_writes: review): approve it in the review queue.",
}

// renderError renders an error page with status.
func (c *Console) renderError(w http.ResponseWriter, r *http.Request, v *viewer, status int, msg string) {
	c.render(w, r, v, status, "error", http.StatusText(status), struct {
		Status  int
		Message string
	}{status, msg})
}

// fail renders err as the API would answer it: its status and message,
// never internal detail.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, v *viewer, err error) {
	// A browser that went away is no failure of ours: not logged. The page
	// is still rendered, for a client that only half-closed its connection.
	gone := errors.Is(r.Context().Err(), context.Canceled)
	status := c.cfg.Backend.Status(err)
	msg := teammem.ErrorMessage(err)
	if status >= 500 {
		if !gone {
			c.cfg.Log.LogAttrs(r.Context(), slog.LevelError, "console request failed", slog.String("error", err.Error()))
		}
		msg = "Something went wrong on the server; try again."
	}
	c.renderError(w, r, v, status, fmt.Sprintf("%s.", strings.TrimSuffix(msg, ".")))
}
