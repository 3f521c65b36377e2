package secretscan

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/teammem/teammem/internal/testing/secrettest"
)

// split puts sep into tok after its first n bytes.
func split(tok string, n int, sep string) string { return tok[:n] + sep + tok[n:] }

// TestScanEvasions scans tokens hidden the ways Claude Code's scanner still
// sees through (Unicode spaces and separators end a token) or that only
// read as a token (invisible characters inside one). gitleaks alone finds
// none of them; each must be found on the line a person would count.
func TestScanEvasions(t *testing.T) {
	s := mustScanner(t)
	npm := secrettest.Token("npm-access-token")
	gcp := secrettest.Token("gcp-api-key")
	dapi := secrettest.Token("databricks-api-token")
	ghp := secrettest.Token("github-pat")
	aws := secrettest.Token("aws-access-token")
	// The npm, gcp and databricks rules end with a boundary class, which
	// is what a Unicode space after the token fails to match in RE2.
	after := func(tok, ws string) string { return "notes\nthe registry token is " + tok + ws + "(rotated weekly)\n" }
	// A U+2028 is a newline for the rules, not a line: line numbers count
	// "\n" alone, here two before the token.
	seps := "one\u2028two\nthree\u2029four\n"
	npmAt := func(line int) []Finding {
		return []Finding{{RuleID: "npm-access-token", Label: "NPM Access Token", Line: line}}
	}
	ruleAt := func(id string, line int) []Finding { return []Finding{{RuleID: id, Label: Label(id), Line: line}} }
	tests := []struct {
		name, content string
		want          []Finding
	}{
		{"no-break space after", after(npm, "\u00a0"), npmAt(2)},
		{"narrow no-break space after", after(npm, "\u202f"), npmAt(2)},
		{"ideographic space after", after(npm, "\u3000"), npmAt(2)},
		{"en quad after", after(gcp, "\u2000"), ruleAt("gcp-api-key", 2)},
		{"hair space after", after(gcp, "\u200a"), ruleAt("gcp-api-key", 2)},
		{"ogham space after", after(dapi, "\u1680"), ruleAt("databricks-api-token", 2)},
		{"math space after", after(dapi, "\u205f"), ruleAt("databricks-api-token", 2)},
		{"vertical tab after", after(npm, "\v"), npmAt(2)},
		{"next line after", after(npm, "\u0085"), npmAt(2)},
		{"byte order mark after", after(npm, "\ufeff"), npmAt(2)},
		{"line separator after", seps + "token " + npm + "\u2028then more\n", npmAt(3)},
		{"paragraph separator after", seps + "token " + gcp + "\u2029", ruleAt("gcp-api-key", 3)},
		{"after a line separator", seps + "a\u2028b\u2028token " + npm + "\u2028c\nd\n", npmAt(3)},
		{"zero-width space inside", seps + "origin https://" + split(ghp, 10, "\u200b") + "@github.invalid\n", ruleAt("github-pat", 3)},
		{"zero-width non-joiner inside", seps + split(aws, 4, "\u200c") + "\n", ruleAt("aws-access-token", 3)},
		{"zero-width joiner inside", seps + split(aws, 12, "\u200d") + "\n", ruleAt("aws-access-token", 3)},
		{"word joiner inside", seps + split(ghp, 4, "\u2060") + "\n", ruleAt("github-pat", 3)},
		{"byte order mark inside", seps + split(ghp, 20, "\ufeff") + "\n", ruleAt("github-pat", 3)},
		{"soft hyphen inside", seps + "token " + split(npm, 8, "\u00ad") + "\n", npmAt(3)},
		{"bidi override inside", seps + split(ghp, 5, "\u202e") + "\n", ruleAt("github-pat", 3)},
		{"variation selector inside", seps + split(ghp, 5, "\ufe0f") + "\n", ruleAt("github-pat", 3)},
		{"many invisible characters inside", seps + split(split(ghp, 30, "\u200b\u200b\u00ad"), 6, "\u2060\ufeff") + "\n",
			ruleAt("github-pat", 3)},
		{"soft hyphen inside, no-break space after", seps + "token " + split(npm, 20, "\u00ad") + "\u00a0ok\n", npmAt(3)},
		{"zero-width space inside, separator after", "x\u2028" + split(gcp, 9, "\u200b") + "\u2028y\n", ruleAt("gcp-api-key", 1)},
		{"inside after an emoji", "⚠\ufe0f careful: " + split(ghp, 9, "\u200b") + "\n", ruleAt("github-pat", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := s.Scan(tt.content, nil); !slices.Equal(got, tt.want) {
				t.Errorf("Scan = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestScanViewsMerge checks that a token found in both views, or twice on
// one line, is one finding, and that each occurrence keeps its own line.
func TestScanViewsMerge(t *testing.T) {
	s := mustScanner(t)
	ghp := secrettest.Token("github-pat")
	content := ghp + " and " + split(ghp, 7, "\u200b") + "\n\u2028" + ghp + "\u00a0\n"
	want := []Finding{{RuleID: "github-pat", Label: "GitHub PAT", Line: 1}, {RuleID: "github-pat", Label: "GitHub PAT", Line: 2}}
	if got := s.Scan(content, nil); !slices.Equal(got, want) {
		t.Errorf("Scan = %v, want %v", got, want)
	}
	// An allowlist applies to what was matched in any view.
	if got := s.Scan(content, &Allowlist{RuleIDs: []string{"github-pat"}}); got != nil {
		t.Errorf("Scan with github-pat allowed = %v", got)
	}
}

func TestViews(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string // the views' texts
	}{
		{"ascii", "plain\ttext\r\n", []string{"plain\ttext\r\n"}},
		{"other non-ascii", "café — ✅ naïve 日本\n", []string{"café — ✅ naïve 日本\n"}},
		{"emoji sequences", "⚠\ufe0f 👨\u200d👩\u200d👧 done\n", []string{"⚠\ufe0f 👨\u200d👩\u200d👧 done\n"}},
		{"byte order mark at the start", "\ufeffa\ufeffb", []string{" a b", " ab"}},
		{"lone byte order mark", "\ufeffhi", []string{" hi"}},
		{"spaces", "a\u00a0b\u3000c\vd", []string{"a b c d"}},
		{"separators", "a\u2028b\u2029c\n", []string{"a\nb\nc\n"}},
		{"invisible in ascii", "ab\u200bcd\u00ade", []string{"ab\u200bcd\u00ade", "abcde"}},
		{"invisible at the end", "ab\u2060", []string{"ab\u2060", "ab"}},
		{"both", "a\u200b\u00a0b\u2028", []string{"a\u200b b\n", "a b\n"}},
		{"invalid utf-8 kept", "a\xff\u00a0b\xc0", []string{"a\xff b\xc0"}},
	}
	for _, tt := range tests {
		var got []string
		for _, v := range views(tt.content) {
			got = append(got, v.text)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: views(%q) = %q, want %q", tt.name, tt.content, got, tt.want)
		}
	}
}

// TestViewLines checks the mapping from a view's lines to the original's.
func TestViewLines(t *testing.T) {
	content := "1\u2028still 1\n2\n3\u2028\u2029still 3\u2028\n4"
	vs := views(content)
	if len(vs) != 1 {
		t.Fatalf("%d views, want 1", len(vs))
	}
	v := vs[0]
	lines := strings.Split(v.text, "\n")
	want := []int{1, 1, 2, 3, 3, 3, 3, 4}
	if len(lines) != len(want) {
		t.Fatalf("view %q has %d lines, want %d", v.text, len(lines), len(want))
	}
	for l, w := range want {
		if got := v.line(l); got != w {
			t.Errorf("view line %d (%q): original line %d, want %d", l, lines[l], got, w)
		}
	}
}

// TestJavaScriptWhitespace checks the class table against what \s matches
// in JavaScript (ECMAScript's WhiteSpace and LineTerminator: tab, vertical
// tab, form feed, U+FEFF, every Zs space, LF, CR, U+2028, U+2029): each is
// RE2's \s already or is turned into a boundary.
func TestJavaScriptWhitespace(t *testing.T) {
	js := []rune{'\t', '\v', '\f', 0xFEFF, '\n', '\r', 0x2028, 0x2029}
	for _, rg := range unicode.Zs.R16 {
		for r := rg.Lo; r <= rg.Hi; r += rg.Stride {
			js = append(js, rune(r))
		}
	}
	re2 := func(r rune) bool { return strings.ContainsRune("\t\n\f\r ", r) }
	for _, r := range js {
		cl := classify(r, false)
		switch {
		case re2(r) && cl != keep:
			t.Errorf("%U is RE2 \\s already but has class %d", r, cl)
		case !re2(r) && cl != space && cl != separator && cl != zwnbsp:
			t.Errorf("%U is JavaScript \\s but has class %d", r, cl)
		}
	}
	if len(js) < 25 {
		t.Errorf("only %d JavaScript spaces", len(js))
	}
}

// TestScanPlainTextIsGitleaks checks that text none of the views changes,
// every sample and memory file, is reported exactly as gitleaks reports it.
func TestScanPlainTextIsGitleaks(t *testing.T) {
	forEachSet(t, func(t *testing.T, set sampleSet) {
		s := mustScanner(t)
		texts := map[string]string{}
		for _, smp := range append(append([]sample(nil), set.tp...), set.fp...) {
			texts[smp.where] = smp.text
		}
		for path, content := range set.memdir {
			texts[path] = content
		}
		for where, text := range texts {
			if vs := views(text); len(vs) != 1 || vs[0].text != text {
				t.Logf("%s: views change the text, so findings may differ", where)
				continue
			}
			var want []Finding
			for _, gf := range s.det.DetectString(text) {
				if f := (Finding{RuleID: gf.RuleID, Label: Label(gf.RuleID), Line: gf.StartLine + 1}); !slices.Contains(want, f) {
					want = append(want, f)
				}
			}
			if got := s.Scan(text, nil); !sameFindings(got, want) {
				t.Errorf("%s: Scan = %v, gitleaks %v", where, got, want)
			}
		}
	})
}

// sameFindings reports whether a and b hold the same findings in any order.
func sameFindings(a, b []Finding) bool {
	key := func(f Finding) string { return f.String() }
	as, bs := make([]string, len(a)), make([]string, len(b))
	for i, f := range a {
		as[i] = key(f)
	}
	for i, f := range b {
		bs[i] = key(f)
	}
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}

// TestTokens checks the bare tokens the evasion tests hide are found bare.
func TestTokens(t *testing.T) {
	s := mustScanner(t)
	for _, id := range []string{"npm-access-token", "gcp-api-key", "databricks-api-token", "github-pat", "aws-access-token"} {
		if got := s.Scan(secrettest.Token(id), nil); !slices.Equal(got, []Finding{{RuleID: id, Label: Label(id), Line: 1}}) {
			t.Errorf("%s token: %v", id, got)
		}
	}
}

// TestSkipPlain checks the word-at-a-time skip against a byte loop, with a
// vertical tab or a non-ASCII byte at each position of texts of each length
// around a word.
func TestSkipPlain(t *testing.T) {
	naive := func(s string, i int) int {
		for ; i < len(s); i++ {
			if s[i] >= 0x80 || s[i] == '\v' {
				return i
			}
		}
		return i
	}
	for n := range 20 {
		plain := strings.Repeat("a\x0c\n\x7f\x1b", 4)[:n] // bytes next to \v and the high bit
		for at := range n + 1 {
			for _, b := range []string{"", "\v", "\x80", "\xff", "\x0b\xc2"} {
				s := plain[:at] + b + plain[at:]
				for from := range len(s) + 1 {
					if got, want := skipPlain(s, from), naive(s, from); got != want {
						t.Fatalf("skipPlain(%q, %d) = %d, want %d", s, from, got, want)
					}
				}
			}
		}
	}
}

// TestPlainRange checks classify's shortcut: no rune it skips the Unicode
// tables for is one they would class otherwise.
func TestPlainRange(t *testing.T) {
	n := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if !plainRange(r) {
			continue
		}
		n++
		if r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xFEFF || unicode.Is(unicode.Zs, r) ||
			unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
			t.Errorf("%U is in a plain range but not plain", r)
		}
	}
	if n < 100_000 {
		t.Errorf("only %d runes in the plain ranges", n)
	}
}
