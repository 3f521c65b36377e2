package poison

import (
	"regexp"
	"sort"
	"strings"
)

// Download then execute: a fetch that saves a file (curl -o f, curl … > f,
// curl -O url, wget url, wget -O f, iwr … -OutFile f) and a command that
// runs that same file (sh f, bash f, python f, source f, . f, ./f, .\f,
// cmd /c f, pwsh -File f) on the same line of the shell view or one of the
// next downloadRunLines lines. That is where the line is: a download that
// is saved and then read, unpacked, checksummed or opened is not a hit,
// nor is prose that says to run it ("review it, then run it") without the
// command that does; the command that runs it is, whatever text stands
// between the two.

// downloadRunLines is how many lines after a download its run may be.
const downloadRunLines = 3

var (
	// downloadRE finds a fetch command; its segment runs to the next
	// command separator.
	downloadRE = lineRE{lead: []string{"curl", "wget", "iwr", "invoke-webrequest", "irm", "invoke-restmethod"},
		need: [][]string{{"curl", "wget", "iwr", "invoke-webrequest", "irm", "invoke-restmethod"}},
		re:   regexp.MustCompile(`(?i)\b(curl(\.exe)?|wget|iwr|invoke-webrequest|irm|invoke-restmethod)\b`)}
	// runRE finds a command that runs a file, the file in its last group.
	runRE    = regexp.MustCompile(`(?:^|[\s;&|(])(?:(?:(?:ba|z|da|k|fi|a)?sh|source|\.|pwsh|powershell(?:\.exe)?|python[0-9.]*|py|node|perl|ruby|php|deno\s+run|bun(?:\s+run)?|cmd(?:\.exe)?\s+/c|start|call)\s+(?:-\S+\s+)*["']?([^\s"';&|)]+)|(\.{1,2}[/\\][^\s"';&|)]+))`)
	runWords = []string{"sh", "source", ".", "pwsh", "powershell", "python", "py", "node", "perl", "ruby", "php", "deno", "bun", "cmd", "start", "call"}
)

// downloadRuns returns a hit for each download whose file is run nearby.
func downloadRuns(d *doc) []hit {
	v := d.shell
	var out []hit
	runs := map[int]map[string]int{} // line → file → first offset it is run at, read once per line
	runsOn := func(i int) map[string]int {
		if m, ok := runs[i]; ok {
			return m
		}
		m := map[string]int{}
		if mayRun(v.lines[i]) {
			for _, r := range runRE.FindAllStringSubmatchIndex(v.lines[i], -1) {
				for g := 2; g <= 4; g += 2 {
					if r[g] >= 0 {
						name := baseName(v.lines[i][r[g]:r[g+1]])
						if _, seen := m[name]; !seen {
							m[name] = r[g]
						}
					}
				}
			}
		}
		runs[i] = m
		return m
	}
	for i, line := range v.lines {
		if !v.may(i, &downloadRE) {
			continue
		}
		// One command at a time: each segment between separators is read
		// once, from its first fetch word on.
		for from := 0; from < len(line); {
			end := strings.IndexAny(line[from:], ";&|")
			if end < 0 {
				end = len(line)
			} else {
				end += from
			}
			if m := downloadRE.re.FindStringIndex(line[from:end]); m != nil {
				at := from + m[0]
				if name := savedFile(line[at:end]); name != "" && findRun(runsOn, i, end, name, len(v.lines)) {
					out = append(out, d.viewHit(v, i, at, end))
					break
				}
			}
			from = end + 1
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].line < out[b].line })
	return out
}

// findRun reports whether name is run after offset off of line i, or on
// one of the next downloadRunLines lines.
func findRun(runsOn func(int) map[string]int, i, off int, name string, lines int) bool {
	if at, ok := runsOn(i)[name]; ok && at >= off {
		return true
	}
	for k := i + 1; k <= i+downloadRunLines && k < lines; k++ {
		if _, ok := runsOn(k)[name]; ok {
			return true
		}
	}
	return false
}

// mayRun reports whether line holds a word runRE needs.
func mayRun(line string) bool {
	for _, w := range runWords {
		if strings.Contains(line, w) {
			return true
		}
	}
	return false
}

// savedFile returns the base name of the file a fetch command segment
// saves, or "" when it writes to standard output. The view is lower case,
// so curl's -o (a name follows) and -O (the URL's name) read alike: a URL
// after the flag means the URL's name.
func savedFile(seg string) string {
	f := strings.Fields(seg)
	if len(f) == 0 {
		return ""
	}
	wget := strings.HasPrefix(f[0], "wget")
	url := ""
	for k := 1; k < len(f); k++ {
		a := f[k]
		next := ""
		if k+1 < len(f) {
			next = f[k+1]
		}
		switch {
		case a == ">" || a == ">>":
			return baseName(next)
		case strings.HasPrefix(a, ">"):
			return baseName(a[1:])
		case strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "--output-document=") || strings.HasPrefix(a, "-outfile:"):
			_, v, _ := strings.Cut(a, "=")
			return baseName(v)
		case a == "--output" || a == "--output-document" || a == "-outfile" || a == "--remote-name" ||
			strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.HasSuffix(a, "o") && isFlagLetters(a[1:]):
			if next == "-" || next == "" {
				return "" // -O- writes to standard output
			}
			if isURL(next) {
				return baseName(urlPath(next))
			}
			if a == "--remote-name" {
				continue
			}
			return baseName(next)
		case isURL(a) && url == "":
			url = a
		}
	}
	if wget && url != "" {
		return baseName(urlPath(url))
	}
	return ""
}

func isFlagLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) {
			return false
		}
	}
	return s != ""
}

func isURL(s string) bool {
	s = strings.Trim(s, `"'`)
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "ftp://")
}

// urlPath returns a URL without its query and fragment.
func urlPath(u string) string {
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return u
}

// baseName returns the last element of a path, quotes trimmed.
func baseName(p string) string {
	p = strings.Trim(p, "\"'`,;:()")
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		p = p[i+1:]
	}
	return p
}
