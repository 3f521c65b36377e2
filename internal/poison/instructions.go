package poison

import (
	"regexp"
	"slices"
	"strings"
)

// The instruction rules match one line at a time, case-insensitively.

// Each rule's regex runs only on lines that hold a word of every group of
// its prefilter (words lower case): a word every match must contain. That
// keeps a check of an ordinary file, where "user", "always" or "run" are on
// many lines, to one pass of the prefilter (prefilter.go) and a few regexes.

var overrideREs = []lineRE{
	// "ignore (all) previous instructions", "disregard the system prompt"
	{lead: []string{"ignore", "disregard", "forget", "override", "bypass"},
		need: [][]string{{"ignore", "disregard", "forget", "override", "bypass"},
			{"previous", "prior", "preceding", "above", "earlier", "original", "system", "safety"},
			{"instruction", "prompt", "rules", "guideline", "direction", "directive", "guardrail", "message"}},
		re: regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override|bypass)\s+((all|any|the|your|of|these|every)\s+)*(previous|prior|preceding|above|earlier|original|system|safety)\s+(instructions?|prompts?|rules|guidelines|directions|directives|guardrails|messages)\b`)},
	// "forget everything you were told", "ignore all your rules"
	{lead: []string{"ignore", "disregard", "forget"},
		need: [][]string{{"ignore", "disregard", "forget"}, {"all", "everything"}, {"told", "your"}},
		re:   regexp.MustCompile(`(?i)\b(ignore|disregard|forget)\s+(all|everything)\s+(you\s+(were|have\s+been|'ve\s+been)\s+told|(of\s+)?your\s+(instructions|rules|guidelines))`)},
	// "you are now in developer mode", "you are now DAN"
	{lead: []string{"you"}, need: [][]string{{"you"}, {"are"}, {"now"}},
		re: regexp.MustCompile(`(?i)\byou\s+are\s+now\s+(in\s+)?(an?\s+)?(developer|dan|jailbroken|jailbreak|unrestricted|unfiltered|god|root)\b`)},
	// "new system instructions:", "SYSTEM PROMPT OVERRIDE"
	{lead: []string{"new", "system"}, need: [][]string{{"new", "override"}, {"instructions", "prompt"}},
		re: regexp.MustCompile(`(?i)\bnew\s+(system\s+)?(instructions|prompt)\s*:|\bsystem\s+prompt\s+override\b`)},
}

// concealRE: "do not tell the user", "never inform the developer".
var concealRE = lineRE{lead: []string{"do", "never", "must", "should"}, need: [][]string{{"not", "never", "don"},
	{"tell", "inform", "notify", "alert", "warn", "show", "let", "mention", "reveal"}, audienceWords},
	re: regexp.MustCompile(`(?i)\b(do\s+not|don'?t|never|must\s+not|should\s+not)\s+(tell|inform|notify|alert|warn|show|let|mention\s+(this|it|that)\s+to|reveal\s+(this|it|that)\s+to)\s+(the\s+|your\s+|any\s+)?(user|human|developer|operator|person)s?\b`)}

// concealOtherREs: "without telling the user", "hide this from the user".
var concealOtherREs = []lineRE{
	{lead: []string{"without"}, need: [][]string{{"without"}, audienceWords}, re: regexp.MustCompile(`(?i)\bwithout\s+(telling|informing|notifying|alerting|warning)\s+(the\s+|your\s+|any\s+)?(user|human|developer|operator)s?\b`)},
	{lead: []string{"hide", "conceal", "keep"}, need: [][]string{{"hide", "conceal", "keep"}, {"from"}, audienceWords}, re: regexp.MustCompile(`(?i)\b(hide|conceal|keep)\s+(this|it|that|these|them)(\s+\w+)?\s+(secret\s+)?from\s+(the\s+|your\s+)?(user|human|developer|operator)s?\b`)},
}

// audienceWords are the people a concealment keeps something from.
var audienceWords = []string{"user", "human", "developer", "operator", "person"}

func checkOverride(d *doc) []hit { return matchLines(d, overrideREs...) }

func checkConcealment(d *doc) []hit {
	var out []hit
	for i, line := range d.lines {
		if !d.may(i, &concealRE) {
			continue
		}
		for _, m := range concealRE.find(line, d.ascii[i], -1) {
			// "do not tell the user to restart" is advice on what to say,
			// not concealment.
			rest := strings.TrimLeft(line[m[1]:], " \t")
			if strings.HasPrefix(strings.ToLower(rest), "to ") {
				continue
			}
			out = append(out, hit{line: i + 1, text: line[m[0]:m[1]]})
		}
	}
	return append(out, matchLines(d, concealOtherREs...)...)
}

// commandVerbRE finds an unconditional or hidden run: the adverb, the verb
// and the rest of the line, which riskyRE or unaskedRE must then match for
// "always", "automatically" and "immediately" (silently and quietly are
// hidden by themselves).
var commandVerbRE = lineRE{lead: []string{"always", "automatically", "silently", "quietly", "immediately", "secretly"}, need: [][]string{{"always", "automatically", "silently", "quietly", "immediately", "secretly"},
	{"run", "exec", "invoke", "launch", "call", "source", "pipe"}},
	re: regexp.MustCompile(`(?i)\b(always|automatically|silently|quietly|immediately|secretly)\s+(run|execute|exec|invoke|launch|call|source|pipe)\b`)}

// riskyRE names commands that fetch, escalate, erase, open a channel or
// evaluate text.
var riskyRE = lineRE{need: [][]string{{"curl", "wget", "iwr", "irm", "invoke-webrequest", "iex", "invoke-expression", "eval", "sudo",
	"chmod", "chown", "nc", "ssh", "scp", "rsync", "powershell", "base64", "rm", "|", "python", "http"}},
	re: regexp.MustCompile("(?i)(\\b(curl|wget|iwr|irm|invoke-webrequest|iex|invoke-expression|eval|sudo|chmod|chown|nc|ncat|netcat|socat|ssh|scp|rsync|powershell|base64\\s+(-d|--decode))\\b|\\brm\\s+-[a-z]*[rf]|\\|\\s*(ba|z)?sh\\b|\\bpython[0-9.]*\\s+-c\\b|https?://)")}

// unaskedRE is a qualifier that takes the user out of the loop.
var unaskedRE = lineRE{lead: []string{"without", "before", "at"},
	need: [][]string{{"without", "before", "start"},
		{"asking", "confirm", "approval", "permission", "prompting", "telling", "checking", "every", "each", "any"}},
	re: regexp.MustCompile(`(?i)\bwithout\s+(asking|confirmation|confirming|approval|permission|prompting|telling|checking\s+with)\b|\b(before|at\s+the\s+start\s+of)\s+(every|each|any)\s+(session|task|response|reply|conversation)\b`)}

// unaskedRunRE: "run this without asking": a run verb, then within 120
// characters on the same line the qualifier of unaskedRunVerb.
var unaskedRunRE = lineRE{lead: []string{"run", "exec", "invoke"}, need: [][]string{{"run", "exec", "invoke"}, {"without"}},
	re: regexp.MustCompile(`(?i)\b(run|execute|exec|invoke)\b.{0,120}?\bwithout\s+(asking|confirmation|confirming|approval|permission|prompting)\b`)}

// unaskedRunVerb and unaskedRunQualifier are unaskedRunRE's two ends. A
// bounded gap is a large program for a regex engine, so an ASCII line
// (where 120 characters are 120 bytes) pairs the two ends' matches instead.
var (
	unaskedRunVerb      = lineRE{lead: []string{"run", "exec", "invoke"}, re: regexp.MustCompile(`(?i)\b(run|execute|exec|invoke)\b`)}
	unaskedRunQualifier = lineRE{lead: []string{"without"}, re: regexp.MustCompile(`(?i)\bwithout\s+(asking|confirmation|confirming|approval|permission|prompting)\b`)}
)

const unaskedRunGap = 120

// findUnaskedRun returns unaskedRunRE's leftmost match in line.
func findUnaskedRun(line string, ascii bool) []int {
	if !ascii {
		return unaskedRunRE.re.FindStringIndex(line)
	}
	quals := unaskedRunQualifier.find(line, true, -1)
	if quals == nil {
		return nil
	}
	for _, v := range unaskedRunVerb.find(line, true, -1) {
		for _, q := range quals {
			if q[0] >= v[1] && q[0]-v[1] <= unaskedRunGap {
				return []int{v[0], q[1]}
			}
		}
	}
	return nil
}

func checkCommand(d *doc) []hit {
	var out []hit
	for i, line := range d.lines {
		if d.may(i, &commandVerbRE) {
			if ms := commandVerbRE.find(line, d.ascii[i], 1); ms != nil {
				m := ms[0]
				adverb := strings.ToLower(line[m[2]:m[3]])
				hidden := adverb == "silently" || adverb == "quietly" || adverb == "secretly"
				if hidden || (d.may(i, &riskyRE) && riskyRE.find(line[m[1]:], d.ascii[i], 1) != nil) ||
					(d.may(i, &unaskedRE) && unaskedRE.find(line, d.ascii[i], 1) != nil) {
					out = append(out, hit{line: i + 1, text: line[m[0]:m[1]]})
					continue
				}
			}
		}
		if d.may(i, &unaskedRunRE) {
			if m := findUnaskedRun(line, d.ascii[i]); m != nil {
				out = append(out, hit{line: i + 1, text: line[m[0]:m[1]]})
			}
		}
	}
	return out
}

// lineRE is a regex run on single lines, with what makes it cheap:
//   - need, its prefilter: groups of lower-case words, and a line the regex
//     can match holds a word of every group;
//   - lead, when set: the words a match begins with (the regex then starts
//     with (?i)\b). The regex is tried, anchored, only where one of them
//     starts a word, so a line costs a few substring searches and short
//     anchored attempts rather than a search from every position.
type lineRE struct {
	need  [][]string
	lead  []string
	re    *regexp.Regexp
	at    *regexp.Regexp // re anchored at the start; set by prefilter
	masks []wordMask     // need, as the automaton's word ids; set by prefilter
}

// find returns the submatch indexes of up to n (-1: all) leftmost,
// non-overlapping matches of r in line; ascii says line is all ASCII.
func (r *lineRE) find(line string, ascii bool, n int) [][]int {
	if r.at == nil || !ascii && (strings.Contains(line, "\u212a") || strings.Contains(line, "\u017f")) {
		return r.re.FindAllStringSubmatchIndex(line, n)
	}
	lower := lowerASCII(line)
	var starts []int
	for _, w := range r.lead {
		for off := 0; ; {
			j := strings.Index(lower[off:], w)
			if j < 0 {
				break
			}
			starts = append(starts, off+j)
			off += j + 1
		}
	}
	slices.Sort(starts)
	// (?i) also matches two non-ASCII letters with ASCII ones, the Kelvin
	// sign and the long s: a line with either is searched with the whole
	// regex above.
	var out [][]int
	end := 0
	for _, p := range starts {
		if p < end || (p > 0 && isWordByte(line[p-1])) {
			continue
		}
		m := r.at.FindStringSubmatchIndex(line[p:])
		if m == nil {
			continue
		}
		for k := range m {
			if m[k] >= 0 {
				m[k] += p
			}
		}
		out = append(out, m)
		if len(out) == n {
			break
		}
		end = max(m[1], p+1)
	}
	return out
}

// lowerASCII lower-cases the ASCII letters of s, keeping every offset.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// matchLines returns, on each line, the first match of the first of res
// that matches.
func matchLines(d *doc, res ...lineRE) []hit {
	var out []hit
	for i, line := range d.lines {
		for k := range res {
			r := &res[k]
			if !d.may(i, r) {
				continue
			}
			if ms := r.find(line, d.ascii[i], 1); ms != nil {
				out = append(out, hit{line: i + 1, text: line[ms[0][0]:ms[0][1]]})
				break
			}
		}
	}
	return out
}
