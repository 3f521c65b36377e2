package secretscan

import (
	"maps"
	"slices"
	"testing"
)

// TestStopwordsWithoutTrie checks that the scanner New builds, whose stop
// words are matched without gitleaks' trie, finds exactly what a detector
// built the stock way finds, on every fixture and on secrets chosen to hit
// and to miss the generic rule's stop words.
func TestStopwordsWithoutTrie(t *testing.T) {
	lean := mustScanner(t)
	stock, err := build(false)
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{
		"stopword":    "auth_token = \"Xq9000000Lm2Pz8Rt5Vw\"\n",
		"no stopword": "auth_token = \"Xq9Lm2Pz8Rt5Vw7Yb3Kd\"\n",
		"alphabet":    "client_secret: abcdefghijklmnopqrstuvwxyz123\n",
	}
	for name, text := range texts {
		if got, want := lean.Scan(text, nil), stock.Scan(text, nil); !slices.Equal(got, want) {
			t.Errorf("%s: without the trie %v, with it %v", name, got, want)
		}
	}
	if hasRule(lean.Scan(texts["stopword"], nil), "generic-api-key") {
		t.Error("a secret holding a stop word was reported")
	}
	if !hasRule(lean.Scan(texts["no stopword"], nil), "generic-api-key") {
		t.Error("the control secret was not reported")
	}
	forEachSet(t, func(t *testing.T, set sampleSet) {
		texts := maps.Clone(set.memdir)
		for _, smp := range append(append([]sample(nil), set.tp...), set.fp...) {
			texts[smp.where] = smp.text
		}
		for _, name := range slices.Sorted(maps.Keys(texts)) {
			got, want := lean.Scan(texts[name], nil), stock.Scan(texts[name], nil)
			if !slices.Equal(got, want) {
				t.Errorf("%s: without the trie %v, with it %v", name, got, want)
			}
		}
	})
}
