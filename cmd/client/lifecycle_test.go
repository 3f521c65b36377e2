package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// installedEvents returns the events whose hooks run a teammem command,
// and the commands.
func installedEvents(t *testing.T, settings string) map[string]string {
	t.Helper()
	out := map[string]string{}
	hooks, _ := decode(t, readFile(t, settings))["hooks"].(map[string]any)
	for event, groups := range hooks {
		for _, g := range groups.([]any) {
			for _, h := range g.(map[string]any)["hooks"].([]any) {
				if c := h.(map[string]any)["command"].(string); strings.Contains(c, "teammem hook") {
					if prev, dup := out[event]; dup {
						t.Errorf("%s runs teammem twice: %q and %q", event, prev, c)
					}
					out[event] = c
				}
			}
		}
	}
	return out
}

// TestHookInstallParts: install leaves to Claude Code what it runs itself,
// following its environment and settings, and --engine and --sync-only
// replace earlier entries rather than adding to them.
func TestHookInstallParts(t *testing.T) {
	t.Parallel()
	m := newMachine(t, "http://127.0.0.1:1", "git@github.com:o/parts.git")
	m.env = append(m.env, withoutModel...)
	m.env = append(m.env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY=")
	user := filepath.Join(m.home, ".claude", "settings.json")
	plain, always, syncOnly := clientBin+" hook", clientBin+" hook --engine always", clientBin+" hook --sync-only"
	check := func(step string, want map[string]string) {
		t.Helper()
		got := installedEvents(t, user)
		if len(got) != len(want) {
			t.Fatalf("%s: installed %v, want %v", step, got, want)
		}
		for e, c := range want {
			if got[e] != c {
				t.Fatalf("%s: %s runs %q, want %q (all: %v)", step, e, got[e], c, got)
			}
		}
	}
	syncEvents := func(c string) map[string]string { return map[string]string{"SessionStart": c, "SessionEnd": c} }
	every := func(c string) map[string]string {
		return map[string]string{"SessionStart": c, "SessionEnd": c, "Stop": c, "PostToolUse": c, "PreCompact": c}
	}

	// Claude Code's auto memory is on by default: only the syncs.
	out := m.must("hook", "install")
	check("default", syncEvents(plain))
	contains(t, out, "extraction    Claude Code: Claude Code runs it (autoMemoryEnabled not set: on by default)")
	contains(t, out, "dream         Claude Code:")
	if strings.Contains(out, "no model") {
		t.Errorf("the model is mentioned although teammem runs no part:\n%s", out)
	}
	var st struct {
		Lifecycle struct {
			E struct{ By string } `json:"extraction"`
			D struct{ By string } `json:"dream"`
			N struct{ By string } `json:"session_memory"`
		} `json:"lifecycle"`
	}
	statusWho := func() (string, string, string) {
		if err := json.Unmarshal([]byte(m.status("--json")), &st); err != nil {
			t.Fatal(err)
		}
		return st.Lifecycle.E.By, st.Lifecycle.N.By, st.Lifecycle.D.By
	}
	if e, n, d := statusWho(); e != "Claude Code" || n != "Claude Code" || d != "Claude Code" {
		t.Fatalf("status says %s / %s / %s", e, n, d)
	}

	// autoDreamEnabled false: Claude Code does not dream, and neither does
	// teammem, which reads the setting too, unless TEAMMEM_DREAM=1.
	m.write(filepath.Dir(user), "settings.json", `{"autoDreamEnabled": false}`)
	out = m.must("hook", "install")
	check("autoDreamEnabled false", syncEvents(plain))
	contains(t, out, "dream         nobody (disabled): turned off by autoDreamEnabled=false in "+user)
	m.env = append(m.env, "TEAMMEM_DREAM=1")
	out = m.must("hook", "install")
	check("autoDreamEnabled false, TEAMMEM_DREAM=1", map[string]string{"SessionStart": plain, "SessionEnd": plain, "Stop": plain})
	contains(t, out, "dream         teammem: Claude Code does not run it (autoDreamEnabled=false in "+user+")")
	contains(t, out, "no model is configured here")
	if e, _, d := statusWho(); e != "Claude Code" || d != "teammem" {
		t.Fatalf("status says extraction %s, dream %s", e, d)
	}

	// A project turning auto memory off: teammem runs everything.
	m.write(filepath.Join(m.repo, ".claude"), "settings.json", `{"autoMemoryEnabled": false}`)
	m.must("hook", "install")
	check("project autoMemoryEnabled false", every(plain))
	if e, n, d := statusWho(); e != "teammem" || n != "teammem" || d != "teammem" {
		t.Fatalf("status says %s / %s / %s", e, n, d)
	}
	os.Remove(filepath.Join(m.repo, ".claude", "settings.json"))

	// --engine always, then --sync-only, each replacing the last.
	out = m.must("hook", "install", "--engine", "always")
	check("always", every(always))
	contains(t, out, "--engine always, and Claude Code runs it too")
	if e, _, _ := statusWho(); e != "both" {
		t.Fatalf("status says extraction %s, want both", e)
	}
	m.must("hook", "install", "--sync-only")
	check("sync-only", syncEvents(syncOnly))
	if _, _, code := m.run("hook", "install", "--sync-only", "--engine", "always"); code != 2 {
		t.Fatalf("--sync-only with --engine: exit %d, want 2", code)
	}
	if _, _, code := m.run("hook", "install", "--engine", "sometimes"); code != 2 {
		t.Fatalf("--engine sometimes: exit %d, want 2", code)
	}
	contains(t, m.must("hook", "uninstall"), "removed 2 teammem hook entries")
	if got := installedEvents(t, user); len(got) != 0 {
		t.Fatalf("after uninstall: %v", got)
	}
}

// fakeBin puts fake crontab and systemctl first on the machine's PATH:
// crontab keeps the table in a file, systemctl logs its arguments.
func fakeBin(t *testing.T, m *machine) (crontab, systemctlLog string) {
	t.Helper()
	bin := t.TempDir()
	crontab, systemctlLog = filepath.Join(bin, "table"), filepath.Join(bin, "systemctl.log")
	m.write(bin, "crontab", "#!/bin/sh\ncase \"$1\" in\n"+
		"-l) if [ -f '"+crontab+"' ]; then cat '"+crontab+"'; else echo 'no crontab for tester' >&2; exit 1; fi ;;\n"+
		"-) cat > '"+crontab+"' ;;\n*) exit 2 ;;\nesac\n")
	m.write(bin, "systemctl", "#!/bin/sh\necho \"$@\" >> '"+systemctlLog+"'\n")
	for _, name := range []string{"crontab", "systemctl"} {
		if err := os.Chmod(filepath.Join(bin, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m.env = append(m.env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return crontab, systemctlLog
}

var cronJobRE = regexp.MustCompile(`(?m)^(\d+) (\d+) \* \* \* cd .* dream --min-hours 20 >> .*dream\.log 2>&1$`)

func TestDreamInstallSchedule(t *testing.T) {
	t.Parallel()
	m, _ := dreamMachine(t, "")
	m.env = append(m.env, "TEAMMEM_LLM_PROVIDER=ollama-ish", "ANTHROPIC_API_KEY=sk-ant-secret")
	table, systemctl := fakeBin(t, m)
	if err := os.WriteFile(table, []byte("MAILTO=me\n0 1 * * * backup\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := m.must("dream", "--install-schedule")
	contains(t, out, "installed in your crontab")
	m.must("dream", "--install-schedule", "--scheduler", "cron") // again: replaces its entry
	tab := readFile(t, table)
	jobs := cronJobRE.FindAllStringSubmatch(tab, -1)
	if !strings.HasPrefix(tab, "MAILTO=me\n0 1 * * * backup\n") || len(jobs) != 1 || strings.Count(tab, "# teammem nightly dream ") != 1 {
		t.Fatalf("crontab:\n%s", tab)
	}
	if h, _ := strconv.Atoi(jobs[0][2]); h > 5 {
		t.Fatalf("job at hour %d", h)
	}
	contains(t, tab, "TEAMMEM_LLM_PROVIDER=ollama-ish ")
	if strings.Contains(tab, "sk-ant-secret") {
		t.Fatalf("the API key went into the crontab:\n%s", tab)
	}

	out = m.must("dream", "--install-schedule", "--scheduler", "systemd", "--json")
	var rep struct {
		Installed string `json:"installed"`
		Hour      int    `json:"hour"`
		Minute    int    `json:"minute"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	units := filepath.Join(m.home, ".config", "systemd", "user")
	if filepath.Dir(rep.Installed) != units || rep.Hour > 5 || rep.Minute > 59 {
		t.Fatalf("installed %+v", rep)
	}
	name := strings.TrimSuffix(filepath.Base(rep.Installed), ".timer")
	timer := readFile(t, rep.Installed)
	contains(t, timer, "OnCalendar=*-*-* "+twoDigits(rep.Hour)+":"+twoDigits(rep.Minute)+":00\n")
	service := readFile(t, filepath.Join(units, name+".service"))
	contains(t, service, " dream --min-hours 20\n")
	if strings.Contains(service, "sk-ant-secret") {
		t.Fatal("the API key went into the unit")
	}
	if got := readFile(t, systemctl); got != "--user daemon-reload\n--user enable --now "+name+".timer\n" {
		t.Fatalf("systemctl calls:\n%s", got)
	}
}

func twoDigits(n int) string { return strconv.Itoa(n/10) + strconv.Itoa(n%10) }

// TestExtractLogMode: TEAMMEM_MEMORY_MODE=log appends to today's daily log
// and writes no topic file or index.
func TestExtractLogMode(t *testing.T) {
	t.Parallel()
	script := llmtest.NewScript(
		llmtest.ToolUse("l1", "log", map[string]string{"type": "project", "text": "The bucket answers 503 under load; uploads retry 503 and 429 with backoff."}),
		llmtest.Text("Logged."))
	nm := newNotesMachine(t, llmtest.AnthropicServer(t, script))
	nm.env = append(nm.env, "TEAMMEM_MEMORY_MODE=log")
	out := nm.must("extract", "--session", notesSession, "--json")
	var rep struct {
		Outcome       string   `json:"outcome"`
		MemoriesSaved int      `json:"memories_saved"`
		Files         []string `json:"files"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	dir := nm.memDirOffline()
	if rep.Outcome != "saved" || rep.MemoriesSaved != 1 || len(rep.Files) != 1 ||
		(rep.Files[0] != memdir.DailyLogKey(time.Now()) && rep.Files[0] != memdir.DailyLogKey(time.Now().Add(-time.Hour))) { // run across midnight
		t.Fatalf("report %s", out)
	}
	key := rep.Files[0]
	contains(t, read(t, dir, key), " [project] The bucket answers 503 under load; uploads retry 503 and 429 with backoff.\n")
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "logs" {
		t.Fatalf("memory dir holds %v, want only logs/", entries)
	}
	if _, _, code := nm.run("extract", "--session", notesSession, "--json"); code != 0 {
		t.Fatal("a second run failed")
	}
	nm.env = append(nm.env, "TEAMMEM_MEMORY_MODE=diary")
	if _, errOut, code := nm.run("extract", "--session", notesSession); code != 1 || !strings.Contains(errOut, "TEAMMEM_MEMORY_MODE") {
		t.Fatalf("a bad mode: exit %d %s", code, errOut)
	}
}
