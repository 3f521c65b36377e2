// Package secrettest makes the secret samples the repository's own tests scan: true positives,
// one or more per gitleaks rule the tests rely on (multi-line ones among them: private keys,
// curl commands), and false positives, text the named rule must not report.
//
// Every token is synthetic. Samples are written as templates in which {alnum:36} and the like
// stand for random characters, filled in at run time from a seed derived from the sample, so
// the same on every run: the repository holds no string that looks like a credential to a
// scanner (gitleaks itself, a forge's push protection), yet the tests see realistic ones.
package secrettest

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Sample is one piece of text and the rule it is about.
type Sample struct {
	// RuleID is the gitleaks rule that must (true positives) or must not (false positives)
	// report Text.
	RuleID string
	// Text is the whole sample, a line or lines as a developer would write them into a
	// memory file.
	Text string
	// Where names the sample in failure messages: its table and position.
	Where string
}

// TruePositives returns the true-positive samples, in a fixed order.
func TruePositives() []Sample { return expand("tp", truePositives) }

// FalsePositives returns the false-positive samples, in a fixed order.
func FalsePositives() []Sample { return expand("fp", falsePositives) }

// Token returns a bare synthetic token that gitleaks' rule ruleID reports on
// its own, the same on every call: for tests that put a secret somewhere a
// sample does not fit (a key name, a header, among invisible characters).
// It panics for a rule without a token template (see tokens).
func Token(ruleID string) string {
	t, ok := tokenSet()[ruleID]
	if !ok {
		panic(fmt.Sprintf("secrettest: no token template for rule %s", ruleID))
	}
	return t
}

// tokenSet expands the token templates once.
var tokenSet = sync.OnceValue(func() map[string]string {
	out := make(map[string]string, len(tokens))
	for _, s := range expand("token", tokens) {
		out[s.RuleID] = s.Text
	}
	return out
})

// template is a sample before its placeholders are filled.
type template struct{ ruleID, text string }

// alphabets are the character sets a placeholder {name:n} draws n characters from.
var alphabets = map[string]string{
	"alnum":    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
	"alpha":    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	"upper":    "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
	"uppernum": "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	"lowernum": "abcdefghijklmnopqrstuvwxyz0123456789",
	"digit":    "0123456789",
	"hex":      "0123456789abcdef",
	"base32":   "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
	"bech32":   "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
	"word":     "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_",
	"b64":      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
	"b64url":   "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
}

var placeholder = regexp.MustCompile(`\{([a-z0-9]+):(\d+)\}`)

// expand fills the placeholders of each template. A sample's characters come from a seed
// made of its table, rule and text, so editing one sample leaves the others as they were.
func expand(table string, ts []template) []Sample {
	out := make([]Sample, len(ts))
	for i, t := range ts {
		h := fnv.New128a()
		fmt.Fprintf(h, "%s\x00%s\x00%s", table, t.ruleID, t.text)
		sum := h.Sum(nil)
		rng := rand.New(rand.NewPCG(binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:])))
		text := placeholder.ReplaceAllStringFunc(t.text, func(p string) string {
			m := placeholder.FindStringSubmatch(p)
			chars, ok := alphabets[m[1]]
			n, _ := strconv.Atoi(m[2])
			if !ok {
				panic(fmt.Sprintf("secrettest: %s %s: unknown alphabet in %s", table, t.ruleID, p))
			}
			var b strings.Builder
			for range n {
				b.WriteByte(chars[rng.IntN(len(chars))])
			}
			return b.String()
		})
		out[i] = Sample{RuleID: t.ruleID, Text: text, Where: fmt.Sprintf("secrettest %s %d (%s)", table, i+1, t.ruleID)}
	}
	return out
}
