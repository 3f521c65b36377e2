package poison

import (
	"regexp"
	"strings"
)

// The instruction rules match one line at a time, case-insensitively.

var overrideREs = []*regexp.Regexp{
	// "ignore (all) previous instructions", "disregard the system prompt"
	regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override|bypass)\s+((all|any|the|your|of|these|every)\s+)*(previous|prior|preceding|above|earlier|original|system|safety)\s+(instructions?|prompts?|rules|guidelines|directions|directives|guardrails|messages)\b`),
	// "forget everything you were told", "ignore all your rules"
	regexp.MustCompile(`(?i)\b(ignore|disregard|forget)\s+(all|everything)\s+(you\s+(were|have\s+been|'ve\s+been)\s+told|(of\s+)?your\s+(instructions|rules|guidelines))`),
	// "you are now in developer mode", "you are now DAN"
	regexp.MustCompile(`(?i)\byou\s+are\s+now\s+(in\s+)?(an?\s+)?(developer|dan|jailbroken|jailbreak|unrestricted|unfiltered|god|root)\b`),
	// "new system instructions:", "SYSTEM PROMPT OVERRIDE"
	regexp.MustCompile(`(?i)\bnew\s+(system\s+)?(instructions|prompt)\s*:|\bsystem\s+prompt\s+override\b`),
}

// concealRE: "do not tell the user", "never inform the developer".
var concealRE = regexp.MustCompile(`(?i)\b(do\s+not|don'?t|never|must\s+not|should\s+not)\s+(tell|inform|notify|alert|warn|show|let|mention\s+(this|it|that)\s+to|reveal\s+(this|it|that)\s+to)\s+(the\s+|your\s+|any\s+)?(user|human|developer|operator|person)s?\b`)

// concealOtherREs: "without telling the user", "hide this from the user".
var concealOtherREs = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bwithout\s+(telling|informing|notifying|alerting|warning)\s+(the\s+|your\s+|any\s+)?(user|human|developer|operator)s?\b`),
	regexp.MustCompile(`(?i)\b(hide|conceal|keep)\s+(this|it|that|these|them)(\s+\w+)?\s+(secret\s+)?from\s+(the\s+|your\s+)?(user|human|developer|operator)s?\b`),
}

// The prefilters: a line without one of these words cannot match.
var (
	overrideWords = []string{"ignore", "disregard", "forget", "override", "bypass", "you are now", "instructions", "prompt"}
	audienceWords = []string{"user", "human", "developer", "operator", "person"}
	commandWords  = []string{"always", "automatically", "silently", "quietly", "immediately", "secretly", "without"}
)

func checkOverride(d *doc) []hit { return matchLines(d, overrideWords, overrideREs...) }

func checkConcealment(d *doc) []hit {
	var out []hit
	for i, line := range d.lines {
		if !d.mayMatch(i, audienceWords) {
			continue
		}
		for _, m := range concealRE.FindAllStringIndex(line, -1) {
			// "do not tell the user to restart" is advice on what to say,
			// not concealment.
			rest := strings.TrimLeft(line[m[1]:], " \t")
			if strings.HasPrefix(strings.ToLower(rest), "to ") {
				continue
			}
			out = append(out, hit{line: i + 1, text: line[m[0]:m[1]]})
		}
	}
	return append(out, matchLines(d, audienceWords, concealOtherREs...)...)
}

// commandVerbRE finds an unconditional or hidden run: the adverb, the verb
// and the rest of the line, which riskyRE or unaskedRE must then match for
// "always", "automatically" and "immediately" (silently and quietly are
// hidden by themselves).
var commandVerbRE = regexp.MustCompile(`(?i)\b(always|automatically|silently|quietly|immediately|secretly)\s+(run|execute|exec|invoke|launch|call|source|pipe)\b`)

// riskyRE names commands that fetch, escalate, erase, open a channel or
// evaluate text.
var riskyRE = regexp.MustCompile("(?i)(\\b(curl|wget|iwr|irm|invoke-webrequest|iex|invoke-expression|eval|sudo|chmod|chown|nc|ncat|netcat|socat|ssh|scp|rsync|powershell|base64\\s+(-d|--decode))\\b|\\brm\\s+-[a-z]*[rf]|\\|\\s*(ba|z)?sh\\b|\\bpython[0-9.]*\\s+-c\\b|https?://)")

// unaskedRE is a qualifier that takes the user out of the loop.
var unaskedRE = regexp.MustCompile(`(?i)\bwithout\s+(asking|confirmation|confirming|approval|permission|prompting|telling|checking\s+with)\b|\b(before|at\s+the\s+start\s+of)\s+(every|each|any)\s+(session|task|response|reply|conversation)\b`)

// unaskedRunRE: "run this without asking".
var unaskedRunRE = regexp.MustCompile(`(?i)\b(run|execute|exec|invoke)\b.{0,120}?\bwithout\s+(asking|confirmation|confirming|approval|permission|prompting)\b`)

func checkCommand(d *doc) []hit {
	var out []hit
	for i, line := range d.lines {
		if !d.mayMatch(i, commandWords) {
			continue
		}
		if m := commandVerbRE.FindStringSubmatchIndex(line); m != nil {
			adverb := strings.ToLower(line[m[2]:m[3]])
			hidden := adverb == "silently" || adverb == "quietly" || adverb == "secretly"
			if hidden || riskyRE.MatchString(line[m[1]:]) || unaskedRE.MatchString(line) {
				out = append(out, hit{line: i + 1, text: line[m[0]:m[1]]})
				continue
			}
		}
		if m := unaskedRunRE.FindStringIndex(line); m != nil {
			out = append(out, hit{line: i + 1, text: line[m[0]:m[1]]})
		}
	}
	return out
}

// matchLines returns the first match of any of res on each line that
// holds one of words.
func matchLines(d *doc, words []string, res ...*regexp.Regexp) []hit {
	var out []hit
	for i, line := range d.lines {
		if !d.mayMatch(i, words) {
			continue
		}
		for _, re := range res {
			if m := re.FindStringIndex(line); m != nil {
				out = append(out, hit{line: i + 1, text: line[m[0]:m[1]]})
				break
			}
		}
	}
	return out
}
