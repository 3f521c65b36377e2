package memsync

import "strings"

// Merge3 merges two edited versions of a file with their common base, line by line.
// Lines changed on only one side take that side's version. Where both sides changed
// the same region differently (overlapping hunks), the result keeps both sides'
// lines — ours first, then theirs — with no conflict markers (memory files are read
// by agents, not merged by humans), and conflict reports true. Identical changes on
// both sides are taken once.
//
// Invariants the sync engine relies on:
//   - nothing is lost: every line either side added to base is in merged;
//   - merged holds only lines taken from the inputs (plus, at most, a line
//     terminator where a side's unterminated last line would otherwise run into
//     the next line), so it never contains markers the inputs did not;
//   - Merge3(b, x, x) == x, Merge3(x, x, t) == t and Merge3(x, o, x) == o;
//   - the result is deterministic, and swapping ours and theirs changes it only
//     inside conflicting regions, where the two sides' lines trade places.
//
// Inside a conflicting region every base line was changed by at least one side,
// so base lines are dropped there (a deletion on one side wins over no change on
// the other); lines both versions start or end with are written once.
func Merge3(base, ours, theirs string) (merged string, conflict bool) {
	switch {
	case ours == theirs:
		return ours, false
	case base == ours:
		return theirs, false
	case base == theirs:
		return ours, false
	}
	b, o, t := splitLines(base), splitLines(ours), splitLines(theirs)
	in := interner{}
	bid, oid, tid := in.ids(b), in.ids(o), in.ids(t)
	oh := toHunks(o, lineDiff(bid, oid, len(in)))
	th := toHunks(t, lineDiff(bid, tid, len(in)))

	m := merger{base: b, out: lineWriter{eol: dominantEOL(b, o, t)}}
	m.out.sb.Grow(max(len(ours), len(theirs)) + len(ours)/8)
	m.run(oh, th)
	return m.out.sb.String(), m.conflict
}

// splitLines cuts s after every "\n", so each line keeps its terminator ("\n" or
// "\r\n") and an unterminated last line stays distinguishable from a terminated one.
func splitLines(s string) []string {
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n') + 1
		if i == 0 {
			i = len(s)
		}
		lines, s = append(lines, s[:i]), s[i:]
	}
	return lines
}

// dominantEOL reports the terminator to add after an unterminated line that is
// followed by another: "\r\n" when most terminated input lines use it.
func dominantEOL(docs ...[]string) string {
	crlf, lf := 0, 0
	for _, doc := range docs {
		for _, l := range doc {
			switch {
			case strings.HasSuffix(l, "\r\n"):
				crlf++
			case strings.HasSuffix(l, "\n"):
				lf++
			}
		}
	}
	if crlf > lf {
		return "\r\n"
	}
	return "\n"
}

// interner numbers distinct lines so the diff compares ints, not strings.
type interner map[string]int32

func (in interner) ids(lines []string) []int32 {
	ids := make([]int32, len(lines))
	for i, l := range lines {
		id, ok := in[l]
		if !ok {
			id = int32(len(in))
			in[l] = id
		}
		ids[i] = id
	}
	return ids
}

// A hunk replaces base[lo:hi] with lines (either may be empty, not both).
type hunk struct {
	lo, hi int
	lines  []string
}

// toHunks turns a diff of base against side (del marks base lines, ins marks side
// lines) into maximal hunks. Unmarked lines pair up in order, so consecutive hunks
// of one side are always separated by at least one unchanged base line.
func toHunks(side []string, script editScript) []hunk {
	del, ins := script.del, script.ins
	var hs []hunk
	i, j := 0, 0
	for i < len(del) || j < len(ins) {
		if i < len(del) && j < len(ins) && !del[i] && !ins[j] {
			i, j = i+1, j+1
			continue
		}
		lo, from := i, j
		for i < len(del) && del[i] {
			i++
		}
		for j < len(ins) && ins[j] {
			j++
		}
		if i == lo && j == from { // unpaired tail: impossible for a valid diff, but never loop
			i, j = len(del), len(ins)
		}
		hs = append(hs, hunk{lo: lo, hi: i, lines: side[from:j]})
	}
	return hs
}

// merger writes the merge of two hunk lists against base.
type merger struct {
	base     []string
	out      lineWriter
	conflict bool
}

func (m *merger) run(oh, th []hunk) {
	pos, i, j := 0, 0, 0
	for i < len(oh) || j < len(th) {
		lo, hi, ni, nj := nextRegion(oh, th, i, j)
		m.out.lines(m.base[pos:lo])
		m.region(oh[i:ni], th[j:nj], lo, hi)
		pos, i, j = hi, ni, nj
	}
	m.out.lines(m.base[pos:])
}

// nextRegion groups the earliest pending hunk with every hunk of either side that
// overlaps it, transitively, and returns the base span [lo, hi) they cover and the
// positions of the first hunks after it.
func nextRegion(oh, th []hunk, i, j int) (lo, hi, ni, nj int) {
	if j == len(th) || (i < len(oh) && hunkPrecedes(oh[i], th[j])) {
		lo, hi, i = oh[i].lo, oh[i].hi, i+1
	} else {
		lo, hi, j = th[j].lo, th[j].hi, j+1
	}
	for {
		switch {
		case i < len(oh) && hunkOverlaps(oh[i], lo, hi):
			hi, i = max(hi, oh[i].hi), i+1
		case j < len(th) && hunkOverlaps(th[j], lo, hi):
			hi, j = max(hi, th[j].hi), j+1
		default:
			return lo, hi, i, j
		}
	}
}

// hunkPrecedes orders hunks by base position; a pure insertion goes before a hunk that
// starts where it is inserted, which is what makes that pair merge cleanly.
func hunkPrecedes(a, b hunk) bool {
	return a.lo < b.lo || (a.lo == b.lo && a.lo == a.hi)
}

// hunkOverlaps reports whether h and the span [lo, hi) changed the same base lines, or
// are insertions at the same point. Hunks that merely touch do not overlap.
func hunkOverlaps(h hunk, lo, hi int) bool {
	if h.lo == h.hi && lo == hi {
		return h.lo == lo
	}
	return h.lo < hi && lo < h.hi
}

// region writes base[lo:hi] as changed by the hunks of each side that fall in it.
func (m *merger) region(oh, th []hunk, lo, hi int) {
	switch {
	case len(th) == 0:
		m.out.version(m.version(oh, lo, hi))
		return
	case len(oh) == 0:
		m.out.version(m.version(th, lo, hi))
		return
	}
	ov, tv := m.version(oh, lo, hi), m.version(th, lo, hi)
	p := 0
	for p < len(ov) && p < len(tv) && ov[p].text == tv[p].text {
		p++
	}
	if p == len(ov) && p == len(tv) {
		m.out.version(ov) // the same change on both sides
		return
	}
	m.conflict = true
	s := 0
	for s < len(ov)-p && s < len(tv)-p && ov[len(ov)-1-s].text == tv[len(tv)-1-s].text {
		s++
	}
	// Between the common ends only added lines are kept: every base line in a
	// conflicting region was deleted or replaced by at least one side.
	m.out.version(ov[:p])
	m.out.added(ov[p : len(ov)-s])
	m.out.added(tv[p : len(tv)-s])
	m.out.version(ov[len(ov)-s:])
}

// A vline is one line of a side's version of a region.
type vline struct {
	text  string
	added bool // false for a base line the side kept
}

// version returns a side's text for base[lo:hi], given its hunks inside that span.
func (m *merger) version(hs []hunk, lo, hi int) []vline {
	var v []vline
	p := lo
	for _, h := range hs {
		for ; p < h.lo; p++ {
			v = append(v, vline{text: m.base[p]})
		}
		for _, l := range h.lines {
			v = append(v, vline{text: l, added: true})
		}
		p = h.hi
	}
	for ; p < hi; p++ {
		v = append(v, vline{text: m.base[p]})
	}
	return v
}

// lineWriter concatenates lines, terminating an unterminated line when another
// follows it so that two sides' last lines never fuse into one.
type lineWriter struct {
	sb   strings.Builder
	eol  string
	open bool // the last line written has no "\n"
	cr   bool // ... and ends in "\r", so "\n" alone completes a CRLF
}

func (w *lineWriter) line(l string) {
	if w.open {
		if w.cr {
			w.sb.WriteByte('\n')
		} else {
			w.sb.WriteString(w.eol)
		}
	}
	w.sb.WriteString(l)
	w.open = !strings.HasSuffix(l, "\n")
	w.cr = strings.HasSuffix(l, "\r")
}

func (w *lineWriter) lines(ls []string) {
	for _, l := range ls {
		w.line(l)
	}
}

func (w *lineWriter) version(v []vline) {
	for _, l := range v {
		w.line(l.text)
	}
}

func (w *lineWriter) added(v []vline) {
	for _, l := range v {
		if l.added {
			w.line(l.text)
		}
	}
}

// An editScript turns a into b: del marks the lines of a that are deleted, ins the
// lines of b that are inserted; the unmarked lines of a and b are equal pairwise,
// in order.
type editScript struct {
	del, ins []bool
}

// lineDiff computes an edit script from a to b (ids below nids). It is a shortest
// one unless the search passes its cost limit, which bounds time on pathological
// inputs.
func lineDiff(a, b []int32, nids int) editScript {
	del, ins := make([]bool, len(a)), make([]bool, len(b))
	// A line that does not occur on the other side can never be paired, so it is
	// marked now and left out of the search: heavily rewritten files get cheap,
	// and the result stays a shortest script.
	ra, ia := onlyShared(a, b, nids, del)
	rb, ib := onlyShared(b, a, nids, ins)
	d := newDiffer(ra, rb, costLimit(len(ra)+len(rb)))
	d.compare(0, len(ra), 0, len(rb))
	for k, ch := range d.delA {
		del[ia[k]] = ch
	}
	for k, ch := range d.insB {
		ins[ib[k]] = ch
	}
	return editScript{del: del, ins: ins}
}

// onlyShared returns the lines of x that also occur in y, with their indexes in x,
// and marks the others in mark.
func onlyShared(x, y []int32, nids int, mark []bool) (kept []int32, at []int) {
	inY := make([]bool, nids)
	for _, id := range y {
		inY[id] = true
	}
	kept, at = make([]int32, 0, len(x)), make([]int, 0, len(x))
	for i, id := range x {
		if inY[id] {
			kept, at = append(kept, id), append(at, i)
		} else {
			mark[i] = true
		}
	}
	return kept, at
}

// costLimit is how many edit steps one middle-snake search may take before it
// settles for the furthest point reached, given n lines in all. A whole diff then
// costs about O(n·limit) instead of O(n·D): the limit shrinks as files grow so a
// pathological pair of 250 KB files still merges in a fraction of a second, while
// ordinary edits (D well under the limit) stay exact.
func costLimit(n int) int {
	return min(1024, max(64, (1<<23)/max(n, 1)))
}

// differ runs Myers' O((N+M)·D) linear-space diff (the middle-snake bisection):
// memory is O(N+M) however different the inputs are.
type differ struct {
	a, b       []int32
	delA, insB []bool
	vf, vb     []int // furthest x per diagonal, forward and backward
	limit      int
}

func newDiffer(a, b []int32, limit int) *differ {
	size := 2*min((len(a)+len(b)+1)/2, limit) + 3
	return &differ{
		a: a, b: b,
		delA: make([]bool, len(a)), insB: make([]bool, len(b)),
		vf: make([]int, size), vb: make([]int, size),
		limit: limit,
	}
}

// compare marks a shortest edit script from a[xlo:xhi] to b[ylo:yhi].
func (d *differ) compare(xlo, xhi, ylo, yhi int) {
	for {
		for xlo < xhi && ylo < yhi && d.a[xlo] == d.b[ylo] {
			xlo, ylo = xlo+1, ylo+1
		}
		for xlo < xhi && ylo < yhi && d.a[xhi-1] == d.b[yhi-1] {
			xhi, yhi = xhi-1, yhi-1
		}
		if xlo == xhi || ylo == yhi {
			markAll(d.delA[xlo:xhi])
			markAll(d.insB[ylo:yhi])
			return
		}
		x, y := d.split(d.a[xlo:xhi], d.b[ylo:yhi])
		if (x == 0 && y == 0) || (x == xhi-xlo && y == yhi-ylo) {
			markAll(d.delA[xlo:xhi]) // no usable split: replace the whole box
			markAll(d.insB[ylo:yhi])
			return
		}
		d.compare(xlo, xlo+x, ylo, ylo+y)
		xlo, ylo = xlo+x, ylo+y // loop instead of recursing on the second half
	}
}

func markAll(bs []bool) {
	for i := range bs {
		bs[i] = true
	}
}

// split returns a point (x, y) on a shortest path through the edit graph of a and
// b, found where the forward search from (0, 0) meets the backward search from
// (len(a), len(b)). Diagonal k holds the points with x-y == k (forward) or, in the
// backward search, with the same difference counted from the far corner. A search
// that runs off the graph shrinks its range of diagonals instead of going on.
func (d *differ) split(a, b []int32) (x, y int) {
	n, m := len(a), len(b)
	maxD := min((n+m+1)/2, d.limit)
	off, size := maxD+1, 2*maxD+3
	vf, vb := d.vf[:size], d.vb[:size]
	for i := range vf {
		vf[i], vb[i] = -1, -1
	}
	vf[off+1], vb[off+1] = 0, 0
	delta := n - m
	odd := delta&1 != 0
	var fs, fe, bs, be int // diagonals trimmed at each end, forward and backward
	for c := 0; c <= maxD; c++ {
		for k := -c + fs; k <= c-fe; k += 2 {
			x, y := diagonalStep(vf, off, k, c)
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			vf[off+k] = x
			switch {
			case x > n:
				fe += 2
			case y > m:
				fs += 2
			case odd:
				if r := off + delta - k; r >= 0 && r < size && vb[r] >= 0 && x >= n-vb[r] {
					return x, y
				}
			}
		}
		for k := -c + bs; k <= c-be; k += 2 {
			u, v := diagonalStep(vb, off, k, c)
			for u < n && v < m && a[n-1-u] == b[m-1-v] {
				u, v = u+1, v+1
			}
			vb[off+k] = u
			switch {
			case u > n:
				be += 2
			case v > m:
				bs += 2
			case !odd:
				if f := off + delta - k; f >= 0 && f < size && vf[f] >= 0 && vf[f] >= n-u {
					return vf[f], vf[f] - (f - off)
				}
			}
		}
	}
	return furthestSplit(vf, vb, off, n, m)
}

// diagonalStep returns the furthest point on diagonal k one edit past the search front:
// a deletion from diagonal k-1 or an insertion from diagonal k+1.
func diagonalStep(v []int, off, k, c int) (x, y int) {
	if k == -c || (k != c && v[off+k-1] < v[off+k+1]) {
		x = v[off+k+1]
	} else {
		x = v[off+k-1] + 1
	}
	return x, x - k
}

// furthestSplit is the split of a search stopped by the cost limit: the point inside
// the graph that either search carried furthest from its corner. The path through
// it is valid but may be longer than the shortest.
func furthestSplit(vf, vb []int, off, n, m int) (x, y int) {
	best := -1
	for i := range vf {
		k := i - off
		if fx, fy := vf[i], vf[i]-k; vf[i] >= 0 && fx <= n && fy >= 0 && fy <= m && fx+fy > best {
			best, x, y = fx+fy, fx, fy
		}
		if bu, bv := vb[i], vb[i]-k; vb[i] >= 0 && bu <= n && bv >= 0 && bv <= m && bu+bv > best {
			best, x, y = bu+bv, n-bu, m-bv
		}
	}
	return x, y
}

// MergeUnion merges two versions of a file that have no known common base:
// the lines both share (a longest common subsequence) stand for the base, so
// lines only one side has are all kept, and where both sides differ between
// shared lines each side's lines are kept (conflict reports that). It is
// used when a server's space does not continue the synced history, so
// neither version can be taken for the older one.
func MergeUnion(ours, theirs string) (merged string, conflict bool) {
	if ours == theirs {
		return ours, false
	}
	o, t := splitLines(ours), splitLines(theirs)
	in := interner{}
	oid, tid := in.ids(o), in.ids(t)
	script := lineDiff(oid, tid, len(in))
	var base strings.Builder
	for i, l := range o {
		if !script.del[i] {
			base.WriteString(l)
		}
	}
	return Merge3(base.String(), ours, theirs)
}
