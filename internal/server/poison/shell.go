package poison

import (
	"regexp"
	"slices"
)

// The fetch-exec family: remote content fetched and then executed, by any
// shell, interpreter or package runner, in any of the ways a command line
// writes it. The rules read the shell view (normalize.go): folded, lower
// case, quotes inside words dropped and continued lines joined. A pipe into
// a filter (jq, tar, sha256sum, python -m json.tool) is not execution, nor is
// a package runner given a registry package (npx prettier), nor a download
// that is only saved: see downloadRun for when a saved file counts.

const (
	fetchers = `curl(\.exe)?|wget|fetch|aria2c|iwr|irm|invoke-webrequest|invoke-restmethod`
	// pipeStages are the filters a download may pass through on its way
	// to the interpreter: decoders and copies. The interpreter, and sudo,
	// env or xargs before it, may be named by its path (| /bin/bash,
	// | /usr/bin/env sh, | xargs -I{} sh -c {}).
	pipeStages = `[^|\n]*(\|\s*(base64|tee|cat|gunzip|zcat|gzip|xz|bzip2|sed|tr|xxd|openssl|rev)\b[^|\n]*)*\|\s*` +
		binPath + `(sudo\s+(-\S+\s+)*)?` + binPath + `(env\s+(\S+=\S*\s+)*)?` + binPath +
		`(xargs\s+(-\S+\s+)*` + binPath + `)?`
	// binPath is the directory part of a command named by its path.
	binPath      = `((/[a-z0-9._-]+)*/)?`
	shells       = `(ba|z|da|k|fi|c|tc|a|mk)?sh|pwsh|powershell|cmd`
	interpreters = `python[0-9.]*|perl|ruby|node(js)?|php|deno|bun|lua`
)

var (
	fetcherWords = []string{"curl", "wget", "fetch", "aria2c", "iwr", "irm", "invoke-"}
	shellWords   = []string{"sh", "pwsh", "powershell", "cmd"}
	interpWords  = []string{"python", "perl", "ruby", "node", "php", "deno", "bun", "lua"}
)

// fetchExecREs match a download piped or substituted straight into an
// interpreter, or a package runner given a remote source.
var fetchExecREs = []lineRE{
	// curl … | sh, wget -O- … | sudo bash, curl … | base64 -d | bash, irm … | iex
	{lead: fetcherWords, need: [][]string{fetcherWords, {"|"}, append(slices.Clone(shellWords), "iex", "invoke-expression")},
		re: regexp.MustCompile(`(?i)\b(` + fetchers + `)\b` + pipeStages + `(` + shells + `|iex|invoke-expression)\b`)},
	// curl … | python, curl … | node -, curl … | deno run -
	{lead: fetcherWords, need: [][]string{fetcherWords, {"|"}, interpWords},
		re: regexp.MustCompile("(?i)\\b(" + fetchers + ")\\b" + pipeStages + "(" + interpreters + ")(\\s*run)?(\\s+-{1,2}[a-z]+)*(\\s+-)?\\s*($|[;&|)'\"`])")},
	// bash <(curl …), source <(wget …), . <(curl …), sh <<< "$(curl …)"
	{need: [][]string{append(append(slices.Clone(shellWords), interpWords...), "source", "."), {"<"}, fetcherWords},
		re: regexp.MustCompile(`(?i)(\b(` + shells + `|` + interpreters + `|source)|(^|[\s;&|(])\.)\s+(-\S+\s+)*(<\s*<?\(|<<<\s*["']?(\$\(|` + "`" + `))\s*(` + fetchers + `)\b`)},
	// sh -c "$(curl …)", python3 -c "$(curl …)", node -e "$(curl …)", php -r
	{lead: []string{"sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash", "pwsh", "powershell", "cmd", "python", "perl", "ruby", "node", "php", "deno", "bun", "lua"},
		need: [][]string{append(slices.Clone(shellWords), interpWords...), {"-c", "-e", "-r", "--eval", "-command"}, {"$(", "`"}, fetcherWords},
		re:   regexp.MustCompile("(?i)\\b(" + shells + "|" + interpreters + ")\\s+(-\\S+\\s+)*?(-c|-e|-r|--eval|-command)\\s+[\"']?(\\$\\(|`)\\s*(" + fetchers + ")\\b")},
	// eval "$(curl …)", exec $(wget …)
	{lead: []string{"eval", "exec", "source"}, need: [][]string{{"eval", "exec", "source"}, {"$(", "`"}, fetcherWords},
		re: regexp.MustCompile("(?i)\\b(eval|exec|source)\\s+[\"']?(\\$\\(|`)\\s*(" + fetchers + ")\\b")},
	// iex (iwr …), Invoke-Expression (New-Object Net.WebClient).DownloadString(…)
	{lead: []string{"iex", "invoke-expression"}, need: [][]string{{"iex", "invoke-expression"}, {"iwr", "irm", "invoke-webrequest", "invoke-restmethod", "downloadstring", "net.webclient"}},
		re: regexp.MustCompile(`(?i)\b(iex|invoke-expression)\b.*\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b`)},
	// (New-Object Net.WebClient).DownloadString(…) | iex
	{lead: []string{"downloadstring"}, need: [][]string{{"downloadstring"}, {"|"}, {"iex", "invoke-expression"}},
		re: regexp.MustCompile(`(?i)\b(downloadstring)\b.*\|\s*(iex|invoke-expression)\b`)},
	// npx https://…, pnpm dlx https://…, bunx github:…, uvx --from git+https://…, pipx run https://…, deno run https://…
	{lead: []string{"npx", "pnpx", "bunx", "uvx", "pnpm", "yarn", "bun", "pipx", "deno", "uv", "npm"},
		need: [][]string{{"npx", "pnpx", "bunx", "uvx", "pnpm", "yarn", "bun", "pipx", "deno", "uv", "npm"}, {"http", "git", "gist"}},
		re:   regexp.MustCompile(`(?i)\b(npx|pnpx|bunx|uvx|(pnpm|yarn|bun)\s+(dlx|x)|pipx\s+run|deno\s+(run|install)|uv\s+(tool\s+)?run|npm\s+exec)\s+(-\S+(\s+[^\s-]\S*)?\s+)*?["']?(https?://|git\+|github:|gitlab:|bitbucket:|gist:)`)},
}

func checkFetchExec(d *doc) []hit {
	out := matchLines(d, d.shell, fetchExecREs...)
	return append(out, downloadRuns(d)...)
}
