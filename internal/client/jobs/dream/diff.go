package dream

import (
	"fmt"
	"strings"
)

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// maxDiffCells bounds the LCS table; larger pairs of files are shown as a
// whole-file replacement.
const maxDiffCells = 4_000_000

// opKind is one line's fate in an edit script.
type opKind byte

const (
	opEqual  opKind = ' '
	opDelete opKind = '-'
	opInsert opKind = '+'
)

// diffOp is one line of an edit script; ai and bi are the line's 0-based
// index in the old and new text (the next line's, for the side it is not in).
type diffOp struct {
	kind   opKind
	line   string
	ai, bi int
}

// UnifiedDiff returns the unified diff (3 lines of context) turning a into
// b, with the file names oldName and newName in its header, or "" when the
// texts are equal. The edit script is a longest common subsequence of the
// lines; a missing final newline is marked as diff(1) marks it.
func UnifiedDiff(oldName, newName, a, b string) string {
	if a == b {
		return ""
	}
	ops := editScript(splitLines(a), splitLines(b))
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	for start := 0; start < len(ops); {
		h, next, ok := nextHunk(ops, start)
		if !ok {
			break
		}
		writeHunk(&out, ops[h.from:h.to])
		start = next
	}
	return out.String()
}

// splitLines splits s after each newline; a final line without one is kept.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// editScript turns a into b keeping a longest common subsequence of lines.
func editScript(a, b []string) []diffOp {
	n, m := len(a), len(b)
	if n*m > maxDiffCells {
		var ops []diffOp
		for i, l := range a {
			ops = append(ops, diffOp{opDelete, l, i, 0})
		}
		for j, l := range b {
			ops = append(ops, diffOp{opInsert, l, n, j})
		}
		return ops
	}
	// lcs[i*(m+1)+j] is the length of an LCS of a[i:] and b[j:].
	lcs := make([]int32, (n+1)*(m+1))
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case a[i] == b[j]:
				lcs[i*(m+1)+j] = lcs[(i+1)*(m+1)+j+1] + 1
			default:
				lcs[i*(m+1)+j] = max(lcs[(i+1)*(m+1)+j], lcs[i*(m+1)+j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			ops = append(ops, diffOp{opEqual, a[i], i, j})
			i, j = i+1, j+1
		case j == m || (i < n && lcs[(i+1)*(m+1)+j] >= lcs[i*(m+1)+j+1]):
			ops = append(ops, diffOp{opDelete, a[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{opInsert, b[j], i, j})
			j++
		}
	}
	return ops
}

// span is a half-open range of ops.
type span struct{ from, to int }

// nextHunk finds the hunk holding the first change at or after start: the
// change, further changes separated by at most 2×diffContext equal lines,
// and up to diffContext equal lines on each side. next is where to look
// for the following hunk.
func nextHunk(ops []diffOp, start int) (h span, next int, ok bool) {
	first := start
	for first < len(ops) && ops[first].kind == opEqual {
		first++
	}
	if first == len(ops) {
		return span{}, len(ops), false
	}
	last := first // the last change in the hunk
	for k := first + 1; k < len(ops); k++ {
		if ops[k].kind == opEqual {
			continue
		}
		if k-last-1 > 2*diffContext {
			break
		}
		last = k
	}
	h.from = max(start, first-diffContext)
	h.to = min(len(ops), last+1+diffContext)
	return h, h.to, true
}

// writeHunk writes one hunk: its @@ header and lines.
func writeHunk(out *strings.Builder, ops []diffOp) {
	var oldLen, newLen int
	for _, op := range ops {
		if op.kind != opInsert {
			oldLen++
		}
		if op.kind != opDelete {
			newLen++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(ops[0].ai, oldLen), hunkRange(ops[0].bi, newLen))
	for _, op := range ops {
		out.WriteByte(byte(op.kind))
		out.WriteString(op.line)
		if !strings.HasSuffix(op.line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats a hunk's start and length as diff(1) does: the 1-based
// first line, the length omitted when 1, and for an empty range the line
// before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
