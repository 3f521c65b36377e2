package poison

import (
	"regexp"
	"slices"
	"strings"
)

// The instruction rules match one logical line of the text view at a time
// (normalize.go: folded, lower case, a paragraph's lines joined, marks
// inside words dropped). Words may run together, as spaced-out letters
// leave them ("ignorepreviousinstructions"), so the phrases allow no space
// between their words (\s*); each still starts at a word boundary.

// Each rule's regex runs only on lines that hold a word of every group of
// its prefilter (words lower case): a word every match must contain. That
// keeps a check of an ordinary file, where "user", "always" or "run" are on
// many lines, to one pass of the prefilter (prefilter.go) and a few regexes.

// The override family: telling the agent to drop, void or stop following
// what it was told, in any of the verbs, qualifiers and nouns below.
const (
	overrideVerbs = `ignore|disregard|forget|override|overrule|bypass|skip|discard|dismiss|abandon|neglect|disobey|circumvent|nullify|` +
		`set\s*aside|put\s*aside|pay\s*no\s*(attention|heed|mind)\s*to|(do\s*not|dont|never|no\s*longer)\s*(follow|obey|heed)|stop\s*(following|obeying)`
	overrideQualifiers = `previous|prior|preceding|above|earlier|original|initial|former|system|safety|developer|foregoing|given`
	overrideNouns      = `instructions?|prompts?|rules|guidelines|directions|directives|guardrails|messages|constraints|restrictions|programming|training|safeguards|orders|guidance|polic(y|ies)`
	voidWords          = `void|null|cancell?ed|revoked|obsolete|invalid|superseded|overridden|lifted|suspended|no\s*longer\s*(apply|valid|in\s*effect|hold)|(do\s*not|dont)\s*apply`
)

var (
	overrideVerbWords = []string{"ignor", "disregard", "forget", "overrid", "overrul", "bypass", "skip", "discard", "dismiss", "abandon",
		"neglect", "disobey", "circumvent", "nullify", "aside", "pay", "follow", "obey", "heed"}
	overrideQualWords = []string{"previous", "prior", "preceding", "above", "earlier", "original", "initial", "former", "system", "safety",
		"developer", "foregoing", "given"}
	overrideNounWords = []string{"instruction", "prompt", "rules", "guideline", "direction", "guardrail", "message", "constraint",
		"restriction", "programming", "training", "safeguard", "orders", "guidance", "polic", "directive"}
	overrideLeads = []string{"ignore", "disregard", "forget", "override", "overrule", "bypass", "skip", "discard", "dismiss", "abandon",
		"neglect", "disobey", "circumvent", "nullify", "set", "put", "pay", "do", "dont", "never", "no", "stop"}
	instructionWords = []string{"instruction", "prompt", "directive"}
	voidNeedWords    = []string{"void", "null", "cancel", "revoked", "obsolete", "invalid", "supersed", "overridden", "lifted", "suspended", "longer", "apply"}
)

var overrideREs = []lineRE{
	// "ignore (all) previous instructions", "pay no attention to the system prompt"
	{lead: overrideLeads, need: [][]string{overrideVerbWords, overrideQualWords, overrideNounWords},
		re: regexp.MustCompile(`(?i)\b(` + overrideVerbs + `)\s*((all|any|the|your|of|these|those|every|my|its|each|such)\s*)*(` +
			overrideQualifiers + `)\s*(` + overrideNouns + `)\b`)},
	// "disregard the rules in your system prompt": the noun before its
	// qualifier
	{lead: overrideLeads, need: [][]string{overrideVerbWords, overrideQualWords, overrideNounWords},
		re: regexp.MustCompile(`(?i)\b(` + overrideVerbs + `)\s*((all|any|the|your|these|those|every|each)\s*)*(` + overrideNouns +
			`)\s*(in|of|from)\s*((the|your|my|its)\s*)*(` + overrideQualifiers + `)\s*(` + overrideNouns + `)\b`)},
	// "forget all instructions you were given", "ignore the rules you have been told"
	{lead: overrideLeads, need: [][]string{overrideVerbWords, overrideNounWords, {"you"}},
		re: regexp.MustCompile(`(?i)\b(` + overrideVerbs + `)\s*((all|any|the|your|these|those|every|each)\s*)*(` + overrideNouns +
			`)\s*(that\s*)?you\s*(were|have\s*been|ve\s*been|got|received)\s*(given|told)?\b`)},
	// "forget everything you were told", "ignore all your rules"
	{lead: overrideLeads, need: [][]string{overrideVerbWords, {"all", "everything", "your"}},
		re: regexp.MustCompile(`(?i)\b(` + overrideVerbs + `)\s*((all|everything)\s*(you\s*(were|have\s*been|ve\s*been)\s*told|(that\s*)?(came\s*)?(above|before)(\s*(this|here|now))?\s*([.,;:!)]|$)|so\s*far)|(all\s*)?(of\s*)?your\s*(instructions|rules|guidelines|directives|programming|training|guardrails|restrictions|constraints|safeguards))`)},
	// "your previous instructions are now void"
	{lead: []string{"previous", "prior", "preceding", "above", "earlier", "original", "system", "your", "all"},
		need: [][]string{{"previous", "prior", "preceding", "above", "earlier", "original", "system", "your", "all"}, instructionWords, voidNeedWords},
		re:   regexp.MustCompile(`(?i)\b(previous|prior|preceding|above|earlier|original|system|your|all)\s*(instructions?|prompts?|directives?)\s*((are|is|have\s*been|has\s*been)\s*)?(now\s*)?(` + voidWords + `)\b`)},
	// "your guidelines no longer apply", "your restrictions are now lifted"
	{lead: []string{"your"}, need: [][]string{{"your"}, overrideNounWords, voidNeedWords},
		re: regexp.MustCompile(`(?i)\byour\s*(` + overrideNouns + `)\s*((are|is|have\s*been|has\s*been)\s*)?(now\s*)?(` + voidWords + `)\b`)},
	// "the instructions above no longer apply"
	{lead: []string{"instruction", "prompt", "directive"}, need: [][]string{instructionWords, {"above", "before", "earlier", "given"}, voidNeedWords},
		re: regexp.MustCompile(`(?i)\b(instructions?|prompts?|directives?)\s*(above|before\s*this|given\s*(above|earlier|before)|earlier)\s*((are|is|have\s*been)\s*)?(now\s*)?(` + voidWords + `)\b`)},
	// "you are now in developer mode", "you are no longer bound by", "you have no restrictions"
	{lead: []string{"you"}, need: [][]string{{"you"}, {"now", "bound", "restricted", "limited", "constrained", "have"}},
		re: regexp.MustCompile(`(?i)\byou\s*(are\s*now\s*(in\s*)?(an?\s*)?(developer|dan|jailbroken|jailbreak|unrestricted|unfiltered|god|root)\b|(are|re)\s*(now\s*)?(no\s*longer|not)\s*(bound|restricted|limited|constrained)\s*by|(now\s*)?have\s*no\s*(rules|restrictions|limits|limitations|guidelines|filters|guardrails|constraints)\b)`)},
	// "from now on you will only obey …"
	{lead: []string{"from", "henceforth", "going"}, need: [][]string{{"now", "henceforth", "forward"}, {"obey", "follow", "listen", "orders", "answer"}},
		re: regexp.MustCompile(`(?i)\b(from\s*now\s*on|henceforth|going\s*forward)[\s,]*(you\s*(will|must|shall|are\s*to)\s*)?(only\s*)?(obey|answer\s*only\s*to|take\s*(your\s*)?orders\s*from|(only\s*)?(follow|listen\s*to)\s*(me|my|the\s*instructions\s*(in|of)\s*this))`)},
	// "new system instructions:", "SYSTEM PROMPT OVERRIDE"
	{lead: []string{"new", "system"}, need: [][]string{{"new", "override"}, {"instructions", "prompt"}},
		re: regexp.MustCompile(`(?i)\bnew\s*(system\s*)?(instructions|prompt)\s*:|\bsystem\s*prompt\s*override\b`)},
}

// The concealment family: keeping something from the agent's user.
const (
	concealNegators = `do\s*not|dont|never|must\s*not|mustnt|should\s*not|shouldnt|under\s*no\s*circumstances(\s*(should|must|do)\s*you)?|refrain\s*from|avoid|without`
	audience        = `(the\s*|your\s*|any\s*)?(user|human|developer|operator|person)s?\b`
)

// concealRE: "do not tell the user", "without mentioning it to the user".
var concealRE = lineRE{lead: []string{"do", "dont", "never", "must", "should", "under", "refrain", "avoid", "without"},
	need: [][]string{{"not", "never", "don", "mustn", "shouldn", "circumstances", "refrain", "avoid", "without"},
		{"tell", "inform", "notify", "alert", "warn", "show", "let", "mention", "reveal", "disclos", "report", "explain"}, audienceWords},
	re: regexp.MustCompile(`(?i)\b(` + concealNegators + `)\s*(tell|telling|inform|informing|notify|notifying|alert|alerting|warn|warning|show|showing|let|letting|` +
		`(mention|mentioning|reveal|revealing|disclose|disclosing|report|reporting|explain|explaining)\s*((this|it|that|these|them|anything|any\s*of\s*this)\s*([a-z]+\s*){0,2})?to)\s*` + audience)}

// concealOtherREs: "hide this from the user", "don't mention this in your
// response", "the user must never know", "behind the user's back", "keep
// this between us".
var concealOtherREs = []lineRE{
	{lead: []string{"hide", "conceal", "keep", "withhold"}, need: [][]string{{"hide", "conceal", "keep", "withhold"}, {"from"}, audienceWords},
		re: regexp.MustCompile(`(?i)\b(hide|conceal|keep|withhold)\s*(this|it|that|these|them|everything|anything)(\s*\w+)?\s*(secret\s*|hidden\s*|quiet\s*|private\s*)?from\s*` + audience)},
	{lead: []string{"do", "dont", "never", "without"}, need: [][]string{{"not", "never", "don", "without"},
		{"mention", "reveal", "disclos", "includ", "report"}, {"response", "repl", "answer", "summar", "chat", "conversation"}},
		re: regexp.MustCompile(`(?i)\b(do\s*not|dont|never|without)\s*(mention|mentioning|reveal|revealing|disclose|disclosing|include|including|report|reporting)\s*(this|it|that|these|them|any\s*of\s*this|anything\s*about\s*(this|it))\s*in\s*(your|the|any)\s*(response|reply|replies|answer|summary|chat|conversation)s?\b`)},
	{lead: audienceWords, need: [][]string{audienceWords, {"not", "never"}, {"know", "find", "learn", "told", "informed", "aware", "suspect"}},
		re: regexp.MustCompile(`(?i)\b(user|human|developer|operator)s?\s*(must|should|shall)\s*(not|never)\s*(know|find\s*out|learn\s*(about|of)|be\s*(told|informed|made\s*aware)|suspect)\b`)},
	{lead: []string{"behind"}, need: [][]string{{"behind"}, audienceWords, {"back"}},
		re: regexp.MustCompile(`(?i)\bbehind\s*(the\s*|your\s*)?(user|human|developer|operator)s?\s*backs?\b`)},
	{lead: []string{"keep"}, need: [][]string{{"keep"}, {"between"}},
		re: regexp.MustCompile(`(?i)\bkeep\s*(this|it|that)\s*(just\s*|strictly\s*)?between\s*(us|ourselves|you\s*and\s*me)\b`)},
}

// audienceWords are the people a concealment keeps something from.
var audienceWords = []string{"user", "human", "developer", "operator", "person"}

func checkOverride(d *doc) []hit { return matchLines(d, d.text, overrideREs...) }

func checkConcealment(d *doc) []hit {
	var out []hit
	v := d.text
	for i, line := range v.lines {
		if !v.may(i, &concealRE) {
			continue
		}
		for _, m := range concealRE.find(line, v.ascii[i], -1) {
			// "do not tell the user to restart" is advice on what to say,
			// not concealment.
			rest := strings.TrimLeft(line[m[1]:], " \t")
			if strings.HasPrefix(rest, "to ") {
				continue
			}
			out = append(out, d.viewHit(v, i, m[0], m[1]))
			break
		}
	}
	return append(out, matchLines(d, v, concealOtherREs...)...)
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

// findUnaskedRun returns unaskedRunRE's leftmost match in line. Verbs and
// qualifiers are both in order, so one pass pairs each verb with the first
// qualifier after it (the nearest, which the lazy gap prefers): linear in
// the matches, however they are placed.
func findUnaskedRun(line string, ascii bool) []int {
	if !ascii {
		return unaskedRunRE.re.FindStringIndex(line)
	}
	quals := unaskedRunQualifier.find(line, true, -1)
	if quals == nil {
		return nil
	}
	q := 0
	for _, v := range unaskedRunVerb.find(line, true, -1) {
		for q < len(quals) && quals[q][0] < v[1] {
			q++
		}
		if q == len(quals) {
			return nil
		}
		if quals[q][0]-v[1] <= unaskedRunGap {
			return []int{v[0], quals[q][1]}
		}
	}
	return nil
}

func checkCommand(d *doc) []hit {
	var out []hit
	v := d.text
	for i, line := range v.lines {
		if v.may(i, &commandVerbRE) {
			if ms := commandVerbRE.find(line, v.ascii[i], 1); ms != nil {
				m := ms[0]
				adverb := line[m[2]:m[3]]
				hidden := adverb == "silently" || adverb == "quietly" || adverb == "secretly"
				if hidden || (v.may(i, &riskyRE) && riskyRE.find(line[m[1]:], v.ascii[i], 1) != nil) ||
					(v.may(i, &unaskedRE) && unaskedRE.find(line, v.ascii[i], 1) != nil) {
					out = append(out, d.viewHit(v, i, m[0], m[1]))
					continue
				}
			}
		}
		if v.may(i, &unaskedRunRE) {
			if m := findUnaskedRun(line, v.ascii[i]); m != nil {
				out = append(out, d.viewHit(v, i, m[0], m[1]))
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

// maxAnchored bounds the anchored attempts on one line.
const maxAnchored = 16

// find returns the submatch indexes of up to n (-1: all) leftmost,
// non-overlapping matches of r in line, a line of a view (lower case);
// ascii says line is all ASCII.
func (r *lineRE) find(line string, ascii bool, n int) [][]int {
	if r.at == nil {
		return r.re.FindAllStringSubmatchIndex(line, n)
	}
	var starts []int
	for _, w := range r.lead {
		for off := 0; ; {
			j := strings.Index(line[off:], w)
			if j < 0 {
				break
			}
			starts = append(starts, off+j)
			off += j + 1
			if len(starts) > maxAnchored {
				// Each anchored attempt may read to the end of the line:
				// past a few, one unanchored search is the linear choice.
				return r.re.FindAllStringSubmatchIndex(line, n)
			}
		}
	}
	slices.Sort(starts)
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

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// matchLines returns, on each line of v, the first match of the first of
// res that matches.
func matchLines(d *doc, v *view, res ...lineRE) []hit {
	var out []hit
	for i, line := range v.lines {
		for k := range res {
			r := &res[k]
			if !v.may(i, r) {
				continue
			}
			if ms := r.find(line, v.ascii[i], 1); ms != nil {
				out = append(out, d.viewHit(v, i, ms[0][0], ms[0][1]))
				break
			}
		}
	}
	return out
}
