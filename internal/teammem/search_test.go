package teammem

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseSearchQuery(t *testing.T) {
	terms, err := ParseSearchQuery(`  Deploy "staging"  dep* deploy go.md `)
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchTerm{{"deploy", false}, {"staging", false}, {"dep", true}, {"go", false}, {"md", false}}
	if len(terms) != len(want) {
		t.Fatalf("terms = %v, want %v", terms, want)
	}
	for i := range want {
		if terms[i] != want[i] {
			t.Fatalf("terms = %v, want %v", terms, want)
		}
	}
	for q, msg := range map[string]string{
		"":                             "empty",
		"   ":                          "empty",
		"!!! ---":                      "no word",
		strings.Repeat("a", 300):       "at most 256",
		strings.Repeat("w ", 17):       "", // one word, 17 times
		strings.Repeat("w1 w2 w3 ", 1): "",
		"\xff":                         "UTF-8",
	} {
		_, err := ParseSearchQuery(q)
		if msg == "" {
			if err != nil {
				t.Errorf("%q: %v", q, err)
			}
			continue
		}
		if err == nil || ErrorCode(err) != EInvalid || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want EInvalid with %q", q, err, msg)
		}
	}
	var many []string
	for i := range 17 {
		many = append(many, "w"+string(rune('a'+i)))
	}
	if _, err := ParseSearchQuery(strings.Join(many, " ")); err == nil || !strings.Contains(err.Error(), "at most 16") {
		t.Errorf("17 words: %v", err)
	}
}

func TestSnippet(t *testing.T) {
	terms := []SearchTerm{{"deploy", false}, {"stag", true}}
	long := strings.Repeat("filler words here ", 40)
	cases := []struct{ content, want string }{
		{"We deploy on Fridays.", "We [[deploy]] on Fridays."},
		{"# Notes\n\n- Staging   first,\nthen DEPLOY", "# Notes - [[Staging]] first, then [[DEPLOY]]"},
		{"nothing here", "nothing here"},
		{"", ""},
	}
	for _, c := range cases {
		if got := Snippet(c.content, terms, 240, "[[", "]]"); got != c.want {
			t.Errorf("Snippet(%q) = %q, want %q", c.content, got, c.want)
		}
	}
	got := Snippet(long+"then we deploy to staging "+long, terms, 80, "[[", "]]")
	if n := utf8.RuneCountInString(got); n > 80 {
		t.Errorf("snippet is %d runes, more than 80: %q", n, got)
	}
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || !strings.Contains(got, "[[deploy]]") {
		t.Errorf("snippet = %q", got)
	}
	if got := Snippet(long, terms, 50, "[[", "]]"); utf8.RuneCountInString(got) > 50 || !strings.HasSuffix(got, "…") || strings.HasPrefix(got, "…") {
		t.Errorf("no match snippet = %q", got)
	}
}

// BenchmarkRankSearch ranks a thousand candidates of about 1 KB, as an
// org-wide search of a common word does at its bound.
func BenchmarkRankSearch(b *testing.B) {
	words := strings.Fields("the deploy we use run tests build service database migration index query cache pull push sync client server")
	rows := make([]SearchRow, SearchCandidates)
	for i := range rows {
		var sb strings.Builder
		for j := 0; sb.Len() < 1024; j++ {
			sb.WriteString(words[(i*7+j*3)%len(words)])
			sb.WriteByte(' ')
		}
		rows[i] = SearchRow{Key: "notes/n.md", Text: sb.String()}
	}
	terms, _ := ParseSearchQuery("deploy cache* Server")
	b.ResetTimer()
	for b.Loop() {
		RankSearch(rows, terms)
	}
}
