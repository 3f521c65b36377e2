package console

import "strings"

// diffLine is one line of a diff: Op is ' ' (in both), '-' (only in the
// old version) or '+' (only in the new one); the numbers are 1-based line
// numbers in each version, 0 where the line is absent.
type diffLine struct {
	Op       byte
	Old, New int
	Text     string
}

// maxDiffCells bounds the LCS table (rows × columns after the common
// prefix and suffix are set aside): beyond it the changed middle is shown
// as removed and added as a whole rather than aligned line by line.
const maxDiffCells = 4_000_000

// lineDiff compares two texts by lines: the common prefix and suffix, then
// a longest common subsequence of what is between.
func lineDiff(a, b string) []diffLine {
	x, y := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	var out []diffLine
	for i := range pre {
		out = append(out, diffLine{Op: ' ', Old: i + 1, New: i + 1, Text: x[i]})
	}
	out = append(out, middle(x[pre:len(x)-suf], y[pre:len(y)-suf], pre)...)
	for i := range suf {
		xi, yi := len(x)-suf+i, len(y)-suf+i
		out = append(out, diffLine{Op: ' ', Old: xi + 1, New: yi + 1, Text: x[xi]})
	}
	return out
}

// middle diffs the changed part, whose first line is line off+1 of both.
func middle(x, y []string, off int) []diffLine {
	var out []diffLine
	n, m := len(x), len(y)
	if n*m > maxDiffCells {
		for i, l := range x {
			out = append(out, diffLine{Op: '-', Old: off + i + 1, Text: l})
		}
		for j, l := range y {
			out = append(out, diffLine{Op: '+', New: off + j + 1, Text: l})
		}
		return out
	}
	// lcs[i][j] is the LCS length of x[i:] and y[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			out = append(out, diffLine{Op: ' ', Old: off + i + 1, New: off + j + 1, Text: x[i]})
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out = append(out, diffLine{Op: '+', New: off + j + 1, Text: y[j]})
			j++
		default:
			out = append(out, diffLine{Op: '-', Old: off + i + 1, Text: x[i]})
			i++
		}
	}
	return out
}

// splitLines splits text into lines without their "\n"; a final newline
// does not start another line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// diffCounts counts a diff's added and removed lines.
func diffCounts(lines []diffLine) (added, removed int) {
	for _, l := range lines {
		switch l.Op {
		case '+':
			added++
		case '-':
			removed++
		}
	}
	return added, removed
}
