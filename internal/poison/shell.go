package poison

import "regexp"

// fetchExecREs match a download piped or substituted straight into an
// interpreter. A pipe into a filter (jq, tar, python -m json.tool) is not
// execution.
var fetchExecREs = []*regexp.Regexp{
	// curl … | sh, wget -O- … | sudo bash
	regexp.MustCompile(`(?i)\b(curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^|\n]*\|\s*(sudo\s+(-\S+\s+)*)?(env\s+)?(ba|z|da|k|fi|c|tc)?sh\b`),
	// curl … | python, curl … | node -
	regexp.MustCompile("(?i)\\b(curl|wget)\\b[^|\\n]*\\|\\s*(sudo\\s+)?(python[0-9.]*|perl|ruby|node|php)\\s*(-\\s*)?($|[;&|)'\"`])"),
	// bash <(curl …), source <(wget …)
	regexp.MustCompile(`(?i)(\b(ba|z)?sh|\bsource|(^|\s)\.)\s+<\(\s*(curl|wget)\b`),
	// sh -c "$(curl …)"
	regexp.MustCompile("(?i)\\b(ba|z)?sh\\s+-c\\s+[\"']?(\\$\\(|`)\\s*(curl|wget)\\b"),
	// iex (iwr …), Invoke-Expression (New-Object Net.WebClient).DownloadString(…)
	regexp.MustCompile(`(?i)\b(iex|invoke-expression)\b.*\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b`),
	// iwr … | iex
	regexp.MustCompile(`(?i)\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring)\b.*\|\s*(iex|invoke-expression)\b`),
}

// fetchWords prefilter the lines fetchExecREs may match.
var fetchWords = []string{"curl", "wget", "fetch", "iwr", "irm", "invoke-", "iex", "downloadstring"}

func checkFetchExec(d *doc) []hit { return matchLines(d, fetchWords, fetchExecREs...) }
