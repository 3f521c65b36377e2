package console

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// orgView is the body of GET /v1/org as the console reads it.
type orgView struct {
	Org    teammem.Org `json:"org"`
	Limits struct {
		MaxEntries           int                      `json:"max_entries"`
		MaxEntryBytes        int                      `json:"max_entry_bytes"`
		SecretPolicy         teammem.SecretPolicy     `json:"secret_policy"`
		AutoCreateRepos      bool                     `json:"auto_create_repos"`
		HistoryRetentionDays int                      `json:"history_retention_days"`
		HistoryMaxVersions   int                      `json:"history_max_versions"`
		Poisoning            teammem.PoisoningPolicy  `json:"poisoning"`
		TeamWrites           teammem.TeamWritesPolicy `json:"team_writes"`
		TeamDream            teammem.TeamDreamPolicy  `json:"team_dream"`
		TeamDreamMinWrites   int                      `json:"team_dream_min_writes"`
	} `json:"limits"`
}

// repoRow is one line of the overview's table.
type repoRow struct {
	Slug       string
	Entries    int
	Cap        int
	CapPercent int
	Bytes      int64
	Version    int64
	LastWrite  teammem.LastWrite
	HasWrite   bool
}

// chartDays is how many days the overview's chart covers.
const chartDays = 30

// overview serves /ui/: the org's repos and their team spaces, and the
// team writes per day.
func (c *Console) overview(w http.ResponseWriter, r *http.Request, v *viewer) error {
	a := c.api(v)
	var repos struct {
		Repos []teammem.RepoSummary `json:"repos"`
	}
	if err := a.get(r.Context(), "/v1/repos", &repos); err != nil {
		return err
	}
	var org orgView
	if err := a.get(r.Context(), "/v1/org", &org); err != nil {
		return err
	}
	// The aggregates come from the console's store; the API allowed
	// org.read above, and this is that action again.
	if err := teammem.Authorize(v.p, teammem.ActOrgRead, false); err != nil {
		return err
	}
	last, err := c.cfg.Sessions.TeamLastWrites(r.Context(), v.p.Org.ID)
	if err != nil {
		return err
	}
	today := c.now().UTC().Truncate(24 * time.Hour)
	since := today.AddDate(0, 0, -(chartDays - 1))
	days, err := c.cfg.Sessions.TeamWritesPerDay(r.Context(), v.p.Org.ID, since)
	if err != nil {
		return err
	}
	rows := make([]repoRow, 0, len(repos.Repos))
	for _, rs := range repos.Repos {
		row := repoRow{Slug: rs.Slug, Entries: rs.Team.EntryCount, Cap: org.Limits.MaxEntries, Bytes: rs.Team.TotalBytes, Version: rs.Team.Version}
		if row.Cap > 0 {
			row.CapPercent = min(100, row.Entries*100/row.Cap)
		}
		row.LastWrite, row.HasWrite = last[rs.Slug]
		rows = append(rows, row)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Slug < rows[j].Slug })
	c.render(w, r, v, http.StatusOK, "overview", "Overview", struct {
		Org   orgView
		Repos []repoRow
		Chart chart
	}{org, rows, newChart(since, days)})
	return nil
}

// chart is the overview's bar chart, drawn by the server as SVG.
type chart struct {
	Width, Height int
	Bars          []bar
	Max, Total    int
	First, Last   string
}

// bar is one day of the chart.
type bar struct {
	X, Y, W, H int
	Label      string
}

// newChart lays out one bar per day from since, for chartDays days.
func newChart(since time.Time, days []teammem.DayCount) chart {
	counts := map[string]int{}
	for _, d := range days {
		counts[d.Day.Format(time.DateOnly)] += d.Count
	}
	ch := chart{Width: chartDays * 16, Height: 100}
	for i := range chartDays {
		n := counts[since.AddDate(0, 0, i).Format(time.DateOnly)]
		ch.Max, ch.Total = max(ch.Max, n), ch.Total+n
	}
	for i := range chartDays {
		day := since.AddDate(0, 0, i)
		n := counts[day.Format(time.DateOnly)]
		h := 0
		if ch.Max > 0 {
			h = n * (ch.Height - 4) / ch.Max
		}
		if n > 0 && h < 2 {
			h = 2
		}
		ch.Bars = append(ch.Bars, bar{X: i * 16, Y: ch.Height - h, W: 12, H: h,
			Label: fmt.Sprintf("%s: %d %s", day.Format("Jan 2"), n, plural(n, "write", "writes"))})
	}
	ch.First, ch.Last = since.Format("Jan 2"), since.AddDate(0, 0, chartDays-1).Format("Jan 2")
	return ch
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// treeNode is a directory or an entry of a space's tree.
type treeNode struct {
	Name     string
	Key      string // entries only
	Dir      bool
	Children []*treeNode
	Entry    *spaceEntry
	Findings []teammem.PoisonFinding // the poisoning checks' on the entry's content
}

// spaceEntry is one entry of GET .../team.
type spaceEntry struct {
	Key       string    `json:"key"`
	Content   *string   `json:"content"`
	Size      int       `json:"size"`
	Version   int64     `json:"version"`
	Author    string    `json:"author"`
	UpdatedAt time.Time `json:"updated_at"`
}

// snapshot is the body of GET .../team as the console reads it.
type snapshot struct {
	Version    int64         `json:"version"`
	Checksum   string        `json:"checksum"`
	EntryCount int           `json:"entry_count"`
	TotalBytes int64         `json:"total_bytes"`
	Entries    []*spaceEntry `json:"entries"`
}

// space serves /ui/space?repo=: the team space as a tree.
func (c *Console) space(w http.ResponseWriter, r *http.Request, v *viewer) error {
	repo := r.URL.Query().Get("repo")
	var snap snapshot
	if err := c.api(v).get(r.Context(), spacePath(repo)+"?view=hashes", &snap); err != nil {
		return err
	}
	// GET .../MEMORY.md?lint=1 runs the poisoning checks on the live
	// entries: their findings are the tree's badges.
	var lint wire.IndexLint
	if len(snap.Entries) > 0 {
		if err := c.api(v).get(r.Context(), spacePath(repo)+"/MEMORY.md?lint=1", &lint); err != nil {
			return err
		}
	}
	tree := buildTree(snap.Entries)
	markFindings(tree, lint.Findings)
	c.render(w, r, v, http.StatusOK, "space", repo, struct {
		Repo     string
		Snap     snapshot
		Tree     []*treeNode
		Flagged  int
		Findings int
	}{repo, snap, tree, flaggedFiles(lint.Findings), len(lint.Findings)})
	return nil
}

// markFindings hangs each finding on its entry's node.
func markFindings(nodes []*treeNode, found []teammem.PoisonFinding) {
	for _, n := range nodes {
		if n.Dir {
			markFindings(n.Children, found)
			continue
		}
		n.Findings = findingsAt(found, n.Key)
	}
}

// flaggedFiles counts the entries with findings.
func flaggedFiles(found []teammem.PoisonFinding) int {
	paths := map[string]bool{}
	for _, f := range found {
		paths[f.Path] = true
	}
	return len(paths)
}

// buildTree nests entries by their "/"-separated keys, directories first.
func buildTree(entries []*spaceEntry) []*treeNode {
	root := &treeNode{Dir: true}
	for _, e := range entries {
		n := root
		parts := strings.Split(e.Key, "/")
		for i, p := range parts {
			if i == len(parts)-1 {
				n.Children = append(n.Children, &treeNode{Name: p, Key: e.Key, Entry: e})
				break
			}
			var next *treeNode
			for _, ch := range n.Children {
				if ch.Dir && ch.Name == p {
					next = ch
				}
			}
			if next == nil {
				next = &treeNode{Name: p, Dir: true}
				n.Children = append(n.Children, next)
			}
			n = next
		}
	}
	sortTree(root)
	return root.Children
}

func sortTree(n *treeNode) {
	sort.SliceStable(n.Children, func(i, j int) bool {
		a, b := n.Children[i], n.Children[j]
		if a.Dir != b.Dir {
			return a.Dir
		}
		return a.Name < b.Name
	})
	for _, ch := range n.Children {
		sortTree(ch)
	}
}
