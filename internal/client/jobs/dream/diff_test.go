package dream_test

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/client/jobs/dream"
)

func TestDreamUnifiedDiffGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, a, b, want string
	}{
		{"equal", "x\n", "x\n", ""},
		{"new file", "", "a\nb\n", "--- old\n+++ new\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"deleted file", "a\n", "", "--- old\n+++ new\n@@ -1 +0,0 @@\n-a\n"},
		{"one line changed in the middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"--- old\n+++ new\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"missing final newline", "a\nb", "a\nc", "--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n",
			"--- old\n+++ new\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+twelve\n"},
	}
	for _, tc := range cases {
		if got := dream.UnifiedDiff("old", "new", tc.a, tc.b); got != tc.want {
			t.Errorf("%s:\ngot:\n%s\nwant:\n%s", tc.name, got, tc.want)
		}
	}
}

// TestUnifiedDiffApplies checks on random texts that applying the diff to
// the old text gives the new one.
func TestDreamUnifiedDiffApplies(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	text := func() string {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(strconv.Itoa(rng.IntN(6)) + "\n")
		}
		if rng.IntN(4) == 0 {
			b.WriteString("tail")
		}
		return b.String()
	}
	for i := range 500 {
		a, b := text(), text()
		d := dream.UnifiedDiff("a", "b", a, b)
		got, err := applyDiff(a, d)
		if err != nil || got != b {
			t.Fatalf("case %d: applying\n%s\nto %q gave %q (%v), want %q", i, d, a, got, err, b)
		}
	}
}

// applyDiff applies a unified diff made by UnifiedDiff to a.
func applyDiff(a, diff string) (string, error) {
	if diff == "" {
		return a, nil
	}
	old := strings.SplitAfter(a, "\n")
	if old[len(old)-1] == "" {
		old = old[:len(old)-1]
	}
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	pos := 0 // next line of old to copy
	for i := 2; i < len(lines) && lines[i] != ""; i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "@@"):
			var os, ol, ns, nl int
			if _, err := fmt.Sscanf(normalizeRange(l), "@@ -%d,%d +%d,%d @@", &os, &ol, &ns, &nl); err != nil {
				return "", fmt.Errorf("header %q: %v", l, err)
			}
			start := os - 1
			if ol == 0 {
				start = os
			}
			out = append(out, old[pos:start]...)
			pos = start
		case strings.HasPrefix(l, `\`):
			last := len(out) - 1
			if prev := lines[i-1]; prev[0] == '-' {
				continue
			}
			out[last] = strings.TrimSuffix(out[last], "\n")
		case l[0] == ' ':
			out = append(out, old[pos])
			pos++
		case l[0] == '-':
			pos++
		case l[0] == '+':
			out = append(out, l[1:])
		}
	}
	out = append(out, old[pos:]...)
	return strings.Join(out, ""), nil
}

// normalizeRange spells out omitted ",1" lengths of a hunk header.
func normalizeRange(h string) string {
	f := strings.Fields(h)
	for i := 1; i <= 2; i++ {
		if !strings.Contains(f[i], ",") {
			f[i] += ",1"
		}
	}
	return strings.Join(f, " ")
}
