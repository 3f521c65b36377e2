package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/teammem/teammem/internal/client/jobs/dream"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/llm"
)

// scheduledMinHours is the time gate of a scheduled dream: a nightly run
// fires about 24 h after the previous one, a few seconds either way, so
// the default 24 h gate would skip every other night.
const scheduledMinHours = "20"

// scheduleEnv are the variables a scheduled dream needs and a scheduler
// does not pass on. API keys are left out on purpose: they would land in
// the crontab or a unit file.
var scheduleEnv = []string{llm.EnvProvider, llm.EnvModel, llm.EnvBaseURL, envMemoryMode, "CLAUDE_CONFIG_DIR", "TEAMMEM_MEMORY_DIR"}

// nightlySchedule describes the nightly dream of loc's project.
func (a *app) nightlySchedule(loc memdir.Location) (dream.Schedule, error) {
	exe, err := os.Executable()
	if err != nil {
		return dream.Schedule{}, fmt.Errorf("dream schedule: cannot find this program's path: %w", err)
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	stateDir, err := a.localStateDir(loc)
	if err != nil {
		return dream.Schedule{}, err
	}
	hour, minute := dream.NightlyTime(rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())))
	s := dream.Schedule{Hour: hour, Minute: minute, Dir: first(loc.GitRoot, loc.ProjectRoot), Log: filepath.Join(stateDir, "dream.log"),
		Command: []string{exe, "dream", "--min-hours", scheduledMinHours}, ID: filepath.Base(stateDir)}
	if a.dir != "" { // the scheduler does not see the flag this run was given
		s.Command = append(s.Command, "--dir", loc.MemoryDir)
	}
	for _, name := range scheduleEnv {
		if v := a.getenv(name); v != "" {
			s.Env = append(s.Env, name+"="+v)
		}
	}
	return s, nil
}

// dreamSchedule prints the nightly schedule, or installs it.
func (a *app) dreamSchedule(f dreamFlags) error {
	loc, err := a.location()
	if err != nil {
		return err
	}
	s, err := a.nightlySchedule(loc)
	if err != nil {
		return err
	}
	if !f.install {
		if a.jsonOut {
			return a.printJSON(map[string]any{"line": s.CronLine(), "minute": s.Minute, "hour": s.Hour, "log": s.Log})
		}
		fmt.Fprintln(a.stdout, s.CronLine())
		fmt.Fprintln(a.stderr, "Add it with `crontab -e`, or run `teammem dream --install-schedule`. "+keyNote)
		return nil
	}
	scheduler := f.scheduler
	if scheduler == "" {
		scheduler = "cron"
		if _, err := exec.LookPath("crontab"); err != nil {
			if _, err := exec.LookPath("systemctl"); err == nil {
				scheduler = "systemd"
			}
		}
	}
	var where string
	switch scheduler {
	case "cron":
		where, err = installCron(s)
	case "systemd":
		where, err = a.installSystemd(s)
	default:
		return &usageError{fmt.Errorf("--scheduler %q: want cron or systemd", scheduler)}
	}
	if err != nil {
		return err
	}
	if a.jsonOut {
		return a.printJSON(map[string]any{"scheduler": scheduler, "installed": where, "minute": s.Minute, "hour": s.Hour, "log": s.Log})
	}
	fmt.Fprintf(a.stdout, "nightly dream at %02d:%02d installed in %s; output goes to %s\n", s.Hour, s.Minute, where, s.Log)
	fmt.Fprintln(a.stderr, keyNote)
	return nil
}

// keyNote tells where the model's key must come from.
const keyNote = "The schedule carries the TEAMMEM_LLM_* settings of this shell but no API key: give the scheduled run\n" +
	"its key yourself (a line ANTHROPIC_API_KEY=... or OPENAI_API_KEY=... at the top of the crontab, or an\n" +
	"Environment= line in the systemd service), or use a local model that needs none."

// installCron replaces this project's entry in the user's crontab.
func installCron(s dream.Schedule) (string, error) {
	if _, err := exec.LookPath("crontab"); err != nil {
		return "", errors.New("dream --install-schedule: crontab is not installed; try --scheduler systemd")
	}
	var out, errb bytes.Buffer
	list := exec.Command("crontab", "-l")
	list.Stdout, list.Stderr = &out, &errb
	if err := list.Run(); err != nil && !strings.Contains(strings.ToLower(errb.String()), "no crontab") {
		return "", fmt.Errorf("crontab -l: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	install := exec.Command("crontab", "-")
	install.Stdin = strings.NewReader(s.InstallCron(out.String()))
	if b, err := install.CombinedOutput(); err != nil {
		return "", fmt.Errorf("crontab -: %v: %s", err, strings.TrimSpace(string(b)))
	}
	return "your crontab", nil
}

// installSystemd writes a user service and timer and enables the timer.
func (a *app) installSystemd(s dream.Schedule) (string, error) {
	base := a.getenv("XDG_CONFIG_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".config")
	}
	dir := filepath.Join(base, "systemd", "user")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	service, timer := s.SystemdUnits()
	for name, body := range map[string]string{s.UnitName() + ".service": service, s.UnitName() + ".timer": timer} {
		if _, err := memdir.WriteAtomic(dir, name, []byte(body)); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{{"--user", "daemon-reload"}, {"--user", "enable", "--now", s.UnitName() + ".timer"}} {
		if b, err := exec.Command("systemctl", args...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("systemctl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(b)))
		}
	}
	return filepath.Join(dir, s.UnitName()+".timer"), nil
}
