package poison

import "regexp"

// fetchExecREs match a download piped or substituted straight into an
// interpreter. A pipe into a filter (jq, tar, python -m json.tool) is not
// execution.
var fetchExecREs = []lineRE{
	// curl … | sh, wget -O- … | sudo bash
	{lead: []string{"curl", "wget", "fetch", "iwr", "irm", "invoke-"}, need: [][]string{{"curl", "wget", "fetch", "iwr", "irm", "invoke-"}, {"|"}, {"sh"}}, re: regexp.MustCompile(`(?i)\b(curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]*\|\s*(sudo\s+(-\S+\s+)*)?(env\s+)?(ba|z|da|k|fi|c|tc)?sh\b`)},
	// curl … | python, curl … | node -
	{lead: []string{"curl", "wget"}, need: [][]string{{"curl", "wget"}, {"|"}, {"python", "perl", "ruby", "node", "php"}}, re: regexp.MustCompile("(?i)\\b(curl|wget)\\b[^|\\n]*\\|\\s*(sudo\\s+)?(python[0-9.]*|perl|ruby|node|php)\\s*(-\\s*)?($|[;&|)'\"`])")},
	// bash <(curl …), source <(wget …)
	{need: [][]string{{"sh", "source", "."}, {"<("}, {"curl", "wget"}}, re: regexp.MustCompile(`(?i)(\b(ba|z)?sh|\bsource|(^|\s)\.)\s+<\(\s*(curl|wget)\b`)},
	// sh -c "$(curl …)"
	{lead: []string{"bash", "zsh", "sh"}, need: [][]string{{"sh"}, {"-c"}, {"$(", "`"}, {"curl", "wget"}}, re: regexp.MustCompile("(?i)\\b(ba|z)?sh\\s+-c\\s+[\"']?(\\$\\(|`)\\s*(curl|wget)\\b")},
	// iex (iwr …), Invoke-Expression (New-Object Net.WebClient).DownloadString(…)
	{lead: []string{"iex", "invoke-expression"}, need: [][]string{{"iex", "invoke-expression"}, {"iwr", "irm", "invoke-webrequest", "invoke-restmethod", "downloadstring", "net.webclient"}}, re: regexp.MustCompile(`(?i)\b(iex|invoke-expression)\b.*\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b`)},
	// iwr … | iex
	{lead: []string{"iwr", "irm", "invoke-webrequest", "invoke-restmethod", "downloadstring"}, need: [][]string{{"iwr", "irm", "invoke-webrequest", "invoke-restmethod", "downloadstring"}, {"|"}, {"iex", "invoke-expression"}}, re: regexp.MustCompile(`(?i)\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring)\b.*\|\s*(iex|invoke-expression)\b`)},
}

func checkFetchExec(d *doc) []hit { return matchLines(d, fetchExecREs...) }
