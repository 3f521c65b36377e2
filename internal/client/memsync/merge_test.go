package memsync

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

func TestMerge3(t *testing.T) {
	tests := []struct {
		name               string
		base, ours, theirs string
		want               string
		wantConflict       bool
	}{
		{"edits at top and bottom",
			"a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nD\n",
			"A\nb\nc\nD\n", false},
		{"adjacent lines edited on each side",
			"a\nb\nc\n", "A\nb\nc\n", "a\nB\nc\n",
			"A\nB\nc\n", false},
		{"same line edited differently",
			"a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\n",
			"a\nB1\nB2\nc\n", true},
		{"identical edits",
			"a\nb\nc\n", "a\nB\nc\n", "a\nB\nc\n",
			"a\nB\nc\n", false},
		{"identical edit plus an edit elsewhere",
			"a\nb\nc\nd\n", "a\nX\nc\nd\n", "a\nX\nc\nD\n",
			"a\nX\nc\nD\n", false},
		{"one-sided delete",
			"a\nb\nc\n", "a\nc\n", "a\nb\nc\nd\n",
			"a\nc\nd\n", false},
		{"both delete the same line",
			"a\nb\nc\nd\n", "a\nc\nd\n", "a\nc\nD\n",
			"a\nc\nD\n", false},
		{"delete vs edit",
			"a\nb\nc\n", "a\nc\n", "a\nB\nc\n",
			"a\nB\nc\n", true},
		{"edit vs delete",
			"a\nb\nc\n", "a\nB\nc\n", "a\nc\n",
			"a\nB\nc\n", true},
		{"delete of two lines vs edit of one drops the other",
			"a\nb\nc\nd\n", "a\nd\n", "a\nB\nc\nd\n",
			"a\nB\nd\n", true},
		{"both append at end",
			"a\n", "a\nx\n", "a\ny\n",
			"a\nx\ny\n", true},
		{"both insert at the top",
			"a\n", "x\na\n", "y\na\n",
			"x\ny\na\n", true},
		{"insertion before a line the other side edits",
			"a\nb\nc\n", "a\nnew\nb\nc\n", "a\nB\nc\n",
			"a\nnew\nB\nc\n", false},
		{"insertion after a line the other side deletes",
			"a\nb\nc\n", "a\nb\nnew\nc\n", "a\nc\n",
			"a\nnew\nc\n", false},
		{"overlap keeps the shared start once",
			"h\na\nb\nt\n", "h\nX\nb\nt\n", "h\nX\nY\nt\n",
			"h\nX\nY\nt\n", true},
		{"overlap keeps the shared end once",
			"h\na\nb\nt\n", "h\nO\nZ\nt\n", "h\nT\nZ\nt\n",
			"h\nO\nT\nZ\nt\n", true},
		{"empty base, both created the file",
			"", "x\n", "y\n",
			"x\ny\n", true},
		{"empty base, same file created twice",
			"", "x\n", "x\n",
			"x\n", false},
		{"empty base, one side created the file",
			"", "", "y\n",
			"y\n", false},
		{"ours emptied the file, theirs unchanged",
			"a\nb\n", "", "a\nb\n",
			"", false},
		{"ours emptied the file, theirs edited",
			"a\nb\n", "", "a\nB\n",
			"B\n", true},
		{"theirs emptied the file, ours edited",
			"a\nb\n", "A\nb\n", "",
			"A\n", true},
		{"both emptied the file",
			"a\n", "", "",
			"", false},
		{"no trailing newline kept on a clean merge",
			"a\nb", "A\nb", "a\nb\nc",
			"A\nb\nc", false},
		{"one side drops the trailing newline",
			"a\nb\n", "a\nb", "A\nb\n",
			"A\nb", false},
		{"both append without trailing newline",
			"a\n", "a\nx", "a\ny",
			"a\nx\ny", true},
		{"unterminated ours before terminated theirs",
			"a\n", "a\nx", "a\ny\n",
			"a\nx\ny\n", true},
		{"unterminated edit before an insertion at the end",
			"a\nb\n", "a\nB", "a\nb\nc\n",
			"a\nB\nc\n", false},
		{"unterminated base line edited on both sides",
			"a\nb", "a\nb1", "a\nb2",
			"a\nb1\nb2", true},
		{"CRLF clean merge",
			"a\r\nb\r\nc\r\n", "A\r\nb\r\nc\r\n", "a\r\nb\r\nC\r\n",
			"A\r\nb\r\nC\r\n", false},
		{"CRLF conflict",
			"a\r\nb\r\n", "a\r\nB1\r\n", "a\r\nB2\r\n",
			"a\r\nB1\r\nB2\r\n", true},
		{"CRLF conflict without trailing newline",
			"a\r\n", "a\r\nx", "a\r\ny",
			"a\r\nx\r\ny", true},
		{"conflict markers in content are ordinary lines",
			"a\n", "a\n<<<<<<< mine\n", "a\n=======\n",
			"a\n<<<<<<< mine\n=======\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, conflict := Merge3(tt.base, tt.ours, tt.theirs)
			if got != tt.want || conflict != tt.wantConflict {
				t.Errorf("Merge3(%q, %q, %q) = %q, %v; want %q, %v",
					tt.base, tt.ours, tt.theirs, got, conflict, tt.want, tt.wantConflict)
			}
		})
	}
}

// TestMerge3Properties checks the merge invariants over random line edits of
// random bases drawn from a small alphabet, so lines repeat and hunks collide.
func TestMerge3Properties(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	for iter := range 500 {
		base := randomDoc(rng, rng.Intn(30))
		ours, theirs := randomEdit(rng, base, "o"), randomEdit(rng, base, "t")
		if rng.Intn(10) == 0 {
			theirs = ours // identical changes
		}
		what := fmt.Sprintf("iteration %d: Merge3(%q, %q, %q)", iter, base, ours, theirs)
		got, conflict := Merge3(base, ours, theirs)
		checkMerge(t, what, base, ours, theirs, got)

		if g, c := Merge3(base, base, theirs); g != theirs || c {
			t.Fatalf("%s: ours == base gave %q, %v; want theirs", what, g, c)
		}
		if g, c := Merge3(base, ours, base); g != ours || c {
			t.Fatalf("%s: theirs == base gave %q, %v; want ours", what, g, c)
		}
		if g, c := Merge3(base, ours, ours); g != ours || c {
			t.Fatalf("%s: ours == theirs gave %q, %v; want ours", what, g, c)
		}
		swapped, swappedConflict := Merge3(base, theirs, ours)
		switch {
		case swappedConflict != conflict:
			t.Fatalf("%s: conflict %v, swapped sides %v", what, conflict, swappedConflict)
		case !conflict && swapped != got:
			t.Fatalf("%s: clean merge %q, swapped sides %q", what, got, swapped)
		case !sameLines(swapped, got):
			t.Fatalf("%s: %q and, swapped sides, %q hold different lines", what, got, swapped)
		}
	}
}

// TestMerge3DisjointEdits checks that edits on either side of a line both keep
// merge to exactly both edits applied, whatever the edits are.
func TestMerge3DisjointEdits(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(2))
	const sep = "-- separator --\n"
	for iter := range 500 {
		top, bottom := randomDoc(rng, rng.Intn(15)), randomDoc(rng, rng.Intn(15))
		if !strings.HasSuffix(top, "\n") {
			top += "\n"
		}
		newTop, newBottom := randomEdit(rng, top, "o"), randomEdit(rng, bottom, "t")
		if !strings.HasSuffix(newTop, "\n") {
			newTop += "\n"
		}
		base := top + sep + bottom
		ours, theirs := newTop+sep+bottom, top+sep+newBottom
		got, conflict := Merge3(base, ours, theirs)
		if want := newTop + sep + newBottom; got != want || conflict {
			t.Fatalf("iteration %d: Merge3(%q, %q, %q) = %q, %v; want %q, false",
				iter, base, ours, theirs, got, conflict, want)
		}
	}
}

func FuzzMerge3(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\n")
	f.Add("a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nD\n")
	f.Add("a\n", "a\nx", "a\ny")
	f.Add("a\r\nb\r\n", "a\r\nB1\r\n", "a\r\nB2")
	f.Add("", "x\n", "y")
	f.Add("a\nb\nc\n", "a\nc\n", "a\nB\nc\n")
	f.Add("x\rx\n\r\n", "\r", "x\r")
	f.Fuzz(func(t *testing.T, base, ours, theirs string) {
		got, _ := Merge3(base, ours, theirs)
		checkMerge(t, fmt.Sprintf("Merge3(%q, %q, %q)", base, ours, theirs), base, ours, theirs, got)
		if g, c := Merge3(base, ours, ours); g != ours || c {
			t.Fatalf("Merge3(%q, x, x) = %q, %v; want x = %q", base, g, c, ours)
		}
	})
}

// TestLineDiffShortest checks the diff against a quadratic LCS on small inputs:
// the unmarked lines pair up equal and in order, and there are as many as the LCS.
func TestLineDiffShortest(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(3))
	for iter := range 2000 {
		a, b := randomIDs(rng, rng.Intn(40), 5), randomIDs(rng, rng.Intn(40), 5)
		script := lineDiff(a, b, 5)
		if pairs := checkScript(t, a, b, script.del, script.ins); pairs != lcsLen(a, b) {
			t.Fatalf("iteration %d: diff of %v and %v pairs %d lines, LCS is %d", iter, a, b, pairs, lcsLen(a, b))
		}
	}
}

// TestLineDiffCostLimit checks that a search cut short by its cost limit still
// yields a valid script.
func TestLineDiffCostLimit(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(4))
	for iter := range 500 {
		a, b := randomIDs(rng, rng.Intn(300), 3), randomIDs(rng, rng.Intn(300), 3)
		d := newDiffer(a, b, 1+rng.Intn(4))
		d.compare(0, len(a), 0, len(b))
		if pairs := checkScript(t, a, b, d.delA, d.insB); pairs > lcsLen(a, b) {
			t.Fatalf("iteration %d: %d pairs exceed the LCS %d", iter, pairs, lcsLen(a, b))
		}
	}
}

// BenchmarkMerge3 merges two differently edited versions of a 250 KB memory file.
func BenchmarkMerge3(b *testing.B) {
	rng := rand.New(rand.NewSource(5))
	var sb strings.Builder
	for i := 0; sb.Len() < 250_000; i++ {
		fmt.Fprintf(&sb, "- fact %d: the %s service retries %d times before paging on-call\n",
			i, []string{"sync", "auth", "store", "index"}[rng.Intn(4)], rng.Intn(9))
	}
	base := sb.String()
	ours, theirs := scatterEdits(rng, base, "ours"), scatterEdits(rng, base, "theirs")
	b.SetBytes(int64(len(base)))
	b.ReportAllocs()
	for b.Loop() {
		Merge3(base, ours, theirs)
	}
}

// BenchmarkMerge3Pathological merges 250 KB files of random one-letter lines,
// the worst case for the diff: every line occurs everywhere and little lines up.
func BenchmarkMerge3Pathological(b *testing.B) {
	rng := rand.New(rand.NewSource(6))
	doc := func() string {
		var sb strings.Builder
		for sb.Len() < 250_000 {
			sb.WriteString([]string{"a\n", "b\n"}[rng.Intn(2)])
		}
		return sb.String()
	}
	base, ours, theirs := doc(), doc(), doc()
	b.SetBytes(int64(len(base)))
	for b.Loop() {
		Merge3(base, ours, theirs)
	}
}

// checkMerge fails t unless merged keeps every line either side added to base and
// holds nothing but input lines. Lines compare without terminators, since merging
// may terminate a side's unterminated last line.
func checkMerge(t *testing.T, what, base, ours, theirs, merged string) {
	t.Helper()
	got, b := lineCounts(merged), lineCounts(base)
	o, th := lineCounts(ours), lineCounts(theirs)
	for l := range got {
		if b[l]+o[l]+th[l] == 0 {
			t.Fatalf("%s = %q: line %q is in no input", what, merged, l)
		}
	}
	for _, side := range []map[string]int{o, th} {
		for l, n := range side {
			if added := n - b[l]; got[l] < added {
				t.Fatalf("%s = %q: lost line %q (added %d times, merged has %d)", what, merged, l, added, got[l])
			}
		}
	}
}

func lineCounts(s string) map[string]int {
	counts := map[string]int{}
	for _, l := range splitLines(s) {
		counts[strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")]++
	}
	return counts
}

func sameLines(x, y string) bool {
	cx, cy := lineCounts(x), lineCounts(y)
	if len(cx) != len(cy) {
		return false
	}
	for l, n := range cx {
		if cy[l] != n {
			return false
		}
	}
	return true
}

// randomDoc returns n lines from a small alphabet; sometimes the last lacks "\n".
func randomDoc(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for range n {
		sb.WriteString(randomLine(rng, ""))
	}
	if n > 0 && rng.Intn(5) == 0 {
		return strings.TrimSuffix(sb.String(), "\n")
	}
	return sb.String()
}

// randomLine mostly repeats shared lines; with a tag it sometimes makes a line
// only that side has, including one that looks like a conflict marker.
func randomLine(rng *rand.Rand, tag string) string {
	switch r := rng.Intn(10); {
	case tag != "" && r < 3:
		return fmt.Sprintf("%s%d\n", tag, rng.Intn(100))
	case tag != "" && r == 3:
		return []string{"<<<<<<< " + tag + "\n", "=======\n", ">>>>>>> " + tag + "\n"}[rng.Intn(3)]
	default:
		return fmt.Sprintf("l%d\n", rng.Intn(8))
	}
}

// randomEdit applies a few random deletions, insertions and replacements of
// whole lines to doc, and sometimes toggles its final newline.
func randomEdit(rng *rand.Rand, doc, tag string) string {
	lines := splitLines(doc)
	for range rng.Intn(5) {
		at := rng.Intn(len(lines) + 1)
		switch op := rng.Intn(3); {
		case op == 0 && at < len(lines):
			lines = append(lines[:at:at], lines[at+1:]...)
		case op == 1 && at < len(lines):
			lines[at] = randomLine(rng, tag)
		default:
			lines = append(lines[:at:at], append([]string{randomLine(rng, tag)}, lines[at:]...)...)
		}
	}
	out := strings.Join(lines, "")
	if rng.Intn(8) == 0 {
		if strings.HasSuffix(out, "\n") {
			return strings.TrimSuffix(out, "\n")
		}
		return out + "\n"
	}
	return out
}

// scatterEdits rewrites, deletes or inserts about one line in forty of doc.
func scatterEdits(rng *rand.Rand, doc, tag string) string {
	var sb strings.Builder
	for i, l := range splitLines(doc) {
		switch rng.Intn(120) {
		case 0:
			fmt.Fprintf(&sb, "- %s rewrote fact %d\n", tag, i)
		case 1:
		case 2:
			fmt.Fprintf(&sb, "- %s learned something new near %d\n", tag, i)
			sb.WriteString(l)
		default:
			sb.WriteString(l)
		}
	}
	return sb.String()
}

func randomIDs(rng *rand.Rand, n, alphabet int) []int32 {
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(rng.Intn(alphabet))
	}
	return ids
}

// checkScript fails t unless the unmarked lines of a and b pair up equal, in
// order, and returns how many pairs there are.
func checkScript(t *testing.T, a, b []int32, del, ins []bool) int {
	t.Helper()
	var ka, kb []int32
	for i, d := range del {
		if !d {
			ka = append(ka, a[i])
		}
	}
	for j, d := range ins {
		if !d {
			kb = append(kb, b[j])
		}
	}
	if fmt.Sprint(ka) != fmt.Sprint(kb) {
		t.Fatalf("diff of %v and %v keeps %v and %v", a, b, ka, kb)
	}
	return len(ka)
}

func lcsLen(a, b []int32) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(cur[j], prev[j+1])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
