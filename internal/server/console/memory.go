package console

import (
	"net/http"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// indexLine is one line of MEMORY.md as the console shows it.
type indexLine struct {
	No   int
	Text string
	Cut  bool // beyond what Claude Code loads
	Long bool // flagged by the lint
}

// memoryPage is the data of /ui/memory.
type memoryPage struct {
	Repo       string
	Stored     bool // the space has a MEMORY.md; else it is rendered from frontmatter
	Lines      []indexLine
	Truncation teammem.Truncation
	Kept       int // lines loaded
	Loaded     string
	Problems   []teammem.LintProblem
	// Findings are the poisoning checks' on the live entries, as
	// GET .../MEMORY.md?lint=1 reports them.
	Findings []teammem.PoisonFinding
}

// memoryIndex serves /ui/memory?repo=: the team space's MEMORY.md with the
// 200-line / 25,000-byte cut marked, and the lint findings, computed by
// the same teammem functions as GET .../MEMORY.md and `teammem index`,
// with the poisoning checks' findings of GET .../MEMORY.md?lint=1.
func (c *Console) memoryIndex(w http.ResponseWriter, r *http.Request, v *viewer) error {
	repo := r.URL.Query().Get("repo")
	var snap snapshot
	if err := c.api(v).get(r.Context(), spacePath(repo), &snap); err != nil {
		return err
	}
	pg := memoryPage{Repo: repo}
	var raw string
	topics := make([]teammem.TopicFile, 0, len(snap.Entries))
	for _, e := range snap.Entries {
		content := ""
		if e.Content != nil {
			content = *e.Content
		}
		if e.Key == teammem.IndexName {
			raw, pg.Stored = content, true
			continue
		}
		topics = append(topics, teammem.TopicFile{Key: e.Key, Content: content})
	}
	if !pg.Stored {
		raw = teammem.RenderIndex(topics)
	}
	pg.Truncation = teammem.TruncateIndex(raw)
	pg.Loaded = pg.Truncation.Content
	kept := pg.Loaded
	if pg.Truncation.Truncated() {
		kept = kept[:strings.LastIndex(kept, "\n\n> WARNING: ")]
	}
	pg.Kept = strings.Count(kept, "\n") + 1
	pg.Problems = teammem.LintIndex(raw, pg.Stored, topics)
	if len(snap.Entries) > 0 {
		var lint wire.IndexLint
		if err := c.api(v).get(r.Context(), spacePath(repo)+"/MEMORY.md?lint=1", &lint); err != nil {
			return err
		}
		pg.Findings = lint.Findings
	}
	long := map[int]bool{}
	for _, p := range pg.Problems {
		if p.Kind == teammem.LintLongLine {
			long[p.Line] = true
		}
	}
	for i, l := range strings.Split(strings.TrimSpace(raw), "\n") {
		pg.Lines = append(pg.Lines, indexLine{No: i + 1, Text: l, Cut: i >= pg.Kept, Long: long[i+1]})
	}
	c.render(w, r, v, http.StatusOK, "memory", "MEMORY.md · "+repo, pg)
	return nil
}
