package teammem

import (
	"sort"
	"strings"
)

// Review of a create_new dream (issue 24 §5): the per-memory diff of its
// output store against its input, and the one write that applies it. Both
// are pure: the caller reads the two stores and the live heads, and sends
// the plan through the one write path.

// DreamChangeKind is how one memory differs between a dream's input and
// its output.
type DreamChangeKind string

// The change kinds (unchanged memories are left out of a diff).
const (
	DreamChangeAdded     DreamChangeKind = "added"     // only in the output
	DreamChangeRewritten DreamChangeKind = "rewritten" // in both, content changed
	DreamChangeMerged    DreamChangeKind = "merged"    // added or rewritten, and absorbed deleted memories
	DreamChangeDeleted   DreamChangeKind = "deleted"   // only in the input
)

// DreamChange is one memory's change. Before is the input's content ("" and
// HadBefore false for an added memory), After the output's (HasAfter false
// for a deleted one). MemoryID is the input's memory at Key ("" for an added
// one). MergedFrom lists, for a merged memory, the keys of the deleted
// memories it absorbed, sorted.
type DreamChange struct {
	Key        string
	Kind       DreamChangeKind
	MemoryID   string
	Before     string
	HadBefore  bool
	After      string
	HasAfter   bool
	MergedFrom []string
}

// Merge rule. A deleted memory D counts as absorbed by a changed or added
// memory M (never the index, MEMORY.md, which names everything) when M's
// content holds D's frontmatter name or description (at least
// mergeMinText characters), or at least half of D's distinct body lines of
// at least mergeMinText characters (trimmed). A D that several memories
// absorb goes to the one holding most of its lines, then the first key.
const mergeMinText = 8

// DiffDream compares a dream's input memories with its output memories
// (live entries with content, keyed by Entry.Key), in key order.
func DiffDream(input, output []Entry) []DreamChange {
	in := make(map[string]Entry, len(input))
	for _, e := range input {
		in[e.Key] = e
	}
	out := make(map[string]Entry, len(output))
	for _, e := range output {
		out[e.Key] = e
	}
	var changes []DreamChange
	for _, o := range output {
		i, had := in[o.Key]
		switch {
		case !had:
			changes = append(changes, DreamChange{Key: o.Key, Kind: DreamChangeAdded, After: o.Content, HasAfter: true})
		case i.Content != o.Content:
			changes = append(changes, DreamChange{Key: o.Key, Kind: DreamChangeRewritten, MemoryID: i.MemoryID,
				Before: i.Content, HadBefore: true, After: o.Content, HasAfter: true})
		}
	}
	var deleted []Entry
	for _, i := range input {
		if _, ok := out[i.Key]; !ok {
			deleted = append(deleted, i)
			changes = append(changes, DreamChange{Key: i.Key, Kind: DreamChangeDeleted, MemoryID: i.MemoryID,
				Before: i.Content, HadBefore: true})
		}
	}
	markMerges(changes, deleted)
	sort.Slice(changes, func(a, b int) bool { return changes[a].Key < changes[b].Key })
	return changes
}

// markMerges turns the added and rewritten changes that absorbed deleted
// memories into merged ones (the merge rule above).
func markMerges(changes []DreamChange, deleted []Entry) {
	for _, d := range deleted {
		best, bestScore := -1, 0
		for j, c := range changes {
			if c.Kind == DreamChangeDeleted || c.Key == IndexName {
				continue
			}
			if score := absorbed(d.Content, c.After); score > bestScore {
				best, bestScore = j, score
			}
		}
		if best >= 0 {
			changes[best].Kind = DreamChangeMerged
			changes[best].MergedFrom = append(changes[best].MergedFrom, d.Key)
			sort.Strings(changes[best].MergedFrom)
		}
	}
}

// absorbed scores how much of the deleted content gone lives on in after:
// 0 when it does not count as absorbed, else 1 + the number of its body
// lines found (so a name or description match alone still counts).
func absorbed(gone, after string) int {
	fm, body, _ := ParseFrontmatter(gone)
	lines := distinctLines(body)
	found := 0
	for _, l := range lines {
		if strings.Contains(after, l) {
			found++
		}
	}
	named := false
	for _, s := range []string{fm.Name, fm.Description} {
		if s = strings.TrimSpace(s); len(s) >= mergeMinText && strings.Contains(after, s) {
			named = true
		}
	}
	if named || (len(lines) > 0 && 2*found >= len(lines)) {
		return 1 + found
	}
	return 0
}

// distinctLines are text's trimmed lines of at least mergeMinText bytes,
// each once.
func distinctLines(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if len(l) >= mergeMinText && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}
