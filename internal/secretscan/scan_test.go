package secretscan

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"
	"github.com/zricethezav/gitleaks/v8/config"
	"github.com/zricethezav/gitleaks/v8/logging"
)

// The three tables below excuse real-world fixture results that legitimately
// differ from the expectation, each with its reason. All are empty with gitleaks
// v8.30.1; an entry that stops applying fails its test, so they cannot go stale.
// The repository's own samples are written to need no excuses.

// tpMisses lists true-positive samples, by fixture location, that the default
// rules do not report.
var tpMisses = map[string]string{}

// fpHits lists false-positive samples that the named rule still reports.
var fpHits = map[string]string{}

// memdirHits lists accepted memdir findings as "path: finding".
var memdirHits = map[string]string{}

func TestNewUsesFullDefaultsQuietly(t *testing.T) {
	s := mustScanner(t)
	if again := mustScanner(t); again != s {
		t.Error("New built a second Scanner")
	}
	if got, want := len(s.ruleIDs()), strings.Count(config.DefaultConfig, "[[rules]]"); got != want {
		t.Errorf("%d rules, want all %d of the default config", got, want)
	}
	if lvl := logging.Logger.GetLevel(); lvl != zerolog.Disabled {
		t.Errorf("gitleaks log level %v, want disabled", lvl)
	}
}

// hasRule reports whether fs holds a finding of ruleID.
func hasRule(fs []Finding, ruleID string) bool {
	for _, f := range fs {
		if f.RuleID == ruleID {
			return true
		}
	}
	return false
}

// trueSamples returns every tp sample of set whose rule is in the default set.
func trueSamples(t *testing.T, s *Scanner, set sampleSet) []sample {
	t.Helper()
	ids := s.ruleIDs()
	var out []sample
	for _, smp := range set.tp {
		if ids[smp.ruleID] {
			out = append(out, smp)
		} else {
			t.Logf("%s: rule %s is not in the default set", smp.where, smp.ruleID)
		}
	}
	if len(out) == 0 {
		t.Fatal("no true-positive samples for the default rules")
	}
	return out
}

// TestTestdataSamples checks the repository's own samples are what the other tests assume:
// every true positive names a rule of the default set, multi-line samples are among them,
// and the generated tokens are the same on every call.
func TestTestdataSamples(t *testing.T) {
	s := mustScanner(t)
	ids := s.ruleIDs()
	set := testdataSet(t)
	rules, multi := map[string]bool{}, 0
	for _, smp := range set.tp {
		if !ids[smp.ruleID] {
			t.Errorf("%s: rule %s is not in the default set", smp.where, smp.ruleID)
		}
		rules[smp.ruleID] = true
		if strings.Count(strings.TrimSpace(smp.text), "\n") > 0 {
			multi++
		}
	}
	if len(rules) < 35 || multi < 5 || len(set.fp) < 15 || len(set.memdir) < 5 {
		t.Errorf("%d rules, %d multi-line samples, %d false positives, %d memory files", len(rules), multi, len(set.fp), len(set.memdir))
	}
	if again := testdataSet(t); !slices.Equal(again.tp, set.tp) || !slices.Equal(again.fp, set.fp) {
		t.Error("the generated samples differ from one call to the next")
	}
}

func TestScanTruePositives(t *testing.T) {
	forEachSet(t, func(t *testing.T, set sampleSet) {
		s := mustScanner(t)
		for _, smp := range trueSamples(t, s, set) {
			got := s.Scan(smp.text, nil)
			found := hasRule(got, smp.ruleID)
			reason, excused := tpMisses[smp.where]
			switch {
			case !found && !excused:
				t.Errorf("%s: %s not found; got %v", smp.where, smp.ruleID, got)
			case found && excused:
				t.Errorf("%s: %s found but listed as a miss (%s)", smp.where, smp.ruleID, reason)
			}
		}
	})
}

func TestScanFalsePositives(t *testing.T) {
	forEachSet(t, func(t *testing.T, set sampleSet) {
		s := mustScanner(t)
		for _, smp := range set.fp {
			got := s.Scan(smp.text, nil)
			hit := hasRule(got, smp.ruleID)
			reason, excused := fpHits[smp.where]
			switch {
			case hit && !excused:
				t.Errorf("%s: %s reported; got %v", smp.where, smp.ruleID, got)
			case !hit && excused:
				t.Errorf("%s: %s not reported but listed as a hit (%s)", smp.where, smp.ruleID, reason)
			}
		}
	})
}

func TestScanMemdirs(t *testing.T) {
	forEachSet(t, func(t *testing.T, set sampleSet) {
		s := mustScanner(t)
		used := make(map[string]bool)
		for path, content := range set.memdir {
			for _, f := range s.Scan(content, nil) {
				key := path + ": " + f.String()
				if _, ok := memdirHits[key]; ok {
					used[key] = true
					continue
				}
				t.Errorf("%s", key)
			}
		}
		for key := range memdirHits {
			if !used[key] && set.real { // the tables excuse real-world results only
				t.Errorf("%s: listed as a hit but not reported", key)
			}
		}
	})
}

func TestFindingNeverHoldsSecret(t *testing.T) {
	forEachSet(t, func(t *testing.T, set sampleSet) {
		s := mustScanner(t)
		for _, smp := range trueSamples(t, s, set) {
			got := s.Scan(smp.text, nil)
			out, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			text := string(out)
			for _, f := range got {
				text += "\n" + f.String()
			}
			// Ask gitleaks directly for what it matched, then look for it.
			for _, gf := range s.det.DetectString(smp.text) {
				for _, secret := range []string{gf.Secret, gf.Match} {
					if secret = strings.TrimSpace(secret); secret == "" {
						t.Fatalf("%s: %s matched empty text", smp.where, gf.RuleID)
					}
					if strings.Contains(text, secret) {
						t.Errorf("%s: %s output holds the matched text", smp.where, gf.RuleID)
					}
				}
			}
		}
	})
}

func TestScanLinesAndOrder(t *testing.T) {
	s := mustScanner(t)
	pat := "ghp_R7kq2VbZx9LmT4wPc8NdJ3sYh6GfA1eUo5Ki"
	aws := "AKIALALEMEL33243OLIB"
	content := "first line\n" + aws + " and " + pat + "\n\nagain " + pat + " " + pat + "\n"
	got := s.Scan(content, nil)
	want := []Finding{
		{RuleID: "aws-access-token", Label: "AWS Access Token", Line: 2},
		{RuleID: "github-pat", Label: "GitHub PAT", Line: 2},
		{RuleID: "github-pat", Label: "GitHub PAT", Line: 4},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Scan = %v, want %v", got, want)
	}
	if got := s.Scan("", nil); got != nil {
		t.Errorf("Scan(\"\") = %v, want nil", got)
	}
	if got := s.Scan("nothing to see here\n", nil); got != nil {
		t.Errorf("Scan(clean) = %v, want nil", got)
	}
}

func TestScanDecodesAndIgnoresAllowComment(t *testing.T) {
	s := mustScanner(t)
	pat := "ghp_R7kq2VbZx9LmT4wPc8NdJ3sYh6GfA1eUo5Ki"
	encoded := base64.StdEncoding.EncodeToString([]byte("token=" + pat))
	content := "notes\nblob: " + encoded + "\n" + pat + " # gitleaks:allow\n"
	got := s.Scan(content, nil)
	want := []Finding{
		{RuleID: "github-pat", Label: "GitHub PAT", Line: 2},
		{RuleID: "github-pat", Label: "GitHub PAT", Line: 3},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Scan = %v, want %v", got, want)
	}
}

func TestScanAllowlist(t *testing.T) {
	s := mustScanner(t)
	pat := "ghp_R7kq2VbZx9LmT4wPc8NdJ3sYh6GfA1eUo5Ki"
	aws := "AKIALALEMEL33243OLIB"
	content := aws + "\n" + pat + "\n"
	tests := []struct {
		name  string
		allow *Allowlist
		want  []string
	}{
		{"nil", nil, []string{"aws-access-token", "github-pat"}},
		{"empty", &Allowlist{}, []string{"aws-access-token", "github-pat"}},
		{"rule id", &Allowlist{RuleIDs: []string{"github-pat"}}, []string{"aws-access-token"}},
		{"regex", &Allowlist{Regexes: []*regexp.Regexp{regexp.MustCompile(`^AKIA`)}}, []string{"github-pat"}},
		{"both", &Allowlist{
			RuleIDs: []string{"aws-access-token"},
			Regexes: []*regexp.Regexp{regexp.MustCompile(`R7kq2V`)},
		}, nil},
		{"other", &Allowlist{
			RuleIDs: []string{"slack-bot-token"},
			Regexes: []*regexp.Regexp{regexp.MustCompile(`^nope$`)},
		}, []string{"aws-access-token", "github-pat"}},
	}
	for _, tt := range tests {
		var ids []string
		for _, f := range s.Scan(content, tt.allow) {
			ids = append(ids, f.RuleID)
		}
		if !slices.Equal(ids, tt.want) {
			t.Errorf("%s: rule ids = %v, want %v", tt.name, ids, tt.want)
		}
	}
}

func TestScanConcurrent(t *testing.T) {
	forEachSet(t, func(t *testing.T, set sampleSet) { checkScanConcurrent(t, set.tp) })
}

// checkScanConcurrent scans samples from many goroutines at once; each must get what a lone
// scan gets.
func checkScanConcurrent(t *testing.T, samples []sample) {
	const workers = 16
	got := make([][][]Finding, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			// Every goroutine calls New, so run alone (-run Concurrent) this
			// test also races the lazy build.
			s, err := New()
			if err != nil {
				t.Error(err)
				return
			}
			got[g] = make([][]Finding, len(samples))
			for i := range samples {
				j := (i + g) % len(samples)
				got[g][j] = s.Scan(samples[j].text, nil)
			}
		})
	}
	wg.Wait()
	s := mustScanner(t)
	for i, smp := range samples {
		want := s.Scan(smp.text, nil)
		for g := range got {
			if got[g] != nil && !slices.Equal(got[g][i], want) {
				t.Errorf("goroutine %d, %s: %v, want %v", g, smp.where, got[g][i], want)
			}
		}
	}
}
