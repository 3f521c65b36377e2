package wire

import "time"

// SearchHit is one memory GET /v1/search found: the live entry at Path
// in the Scope space of Repo, ranked by Score (higher is better, only
// comparable within one answer). Snippet is a short excerpt of the
// content around the matched terms, each match wrapped in Mark's
// delimiters; it never spans more than SnippetMaxRunes runes.
type SearchHit struct {
	Repo      string    `json:"repo"`  // owner/name
	Scope     string    `json:"scope"` // team | personal
	Path      string    `json:"path"`  // the entry's key, e.g. "notes/go.md"
	Snippet   string    `json:"snippet"`
	Score     float64   `json:"score"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by,omitempty"` // the writer's handle, when known
}

// SearchPage is a page of GET /v1/search, best first: NextPage is the
// cursor of the next page (the page query parameter), null on the last.
type SearchPage struct {
	Data     []SearchHit `json:"data"`
	NextPage *string     `json:"next_page"`
}

// SnippetMaxRunes bounds a SearchHit's Snippet.
const SnippetMaxRunes = 240

// The delimiters around a matched term in a Snippet.
const (
	MarkOpen  = "[["
	MarkClose = "]]"
)
