package dream

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
)

// NightlyTime draws the time of a nightly dream, uniformly over the minutes
// from 00:00 to 05:59, so that a team's machines do not all consolidate at
// once (reference §2.11: a nightly dream distils the daily logs).
func NightlyTime(r *rand.Rand) (hour, minute int) {
	m := r.IntN(6 * 60)
	return m / 60, m % 60
}

// Schedule is one nightly dream: at Hour:Minute every day, run Command
// (argv) in Dir with Env set, appending its output to Log.
type Schedule struct {
	Hour, Minute int
	Dir          string
	Command      []string
	// Env holds NAME=value settings the run needs that a scheduler does not
	// pass on (cron starts with an almost empty environment). Never secrets:
	// the lines land in files other users may read.
	Env []string
	Log string
	// ID tells this schedule's entries apart from other projects'.
	ID string
}

// Marker is the comment line CronLines puts above the job, by which an
// install finds and replaces its earlier entry.
func (s Schedule) Marker() string { return "# teammem nightly dream " + s.ID }

// CronLine is the crontab line of the schedule. Words are quoted for sh and
// % is escaped, which cron would turn into a newline.
func (s Schedule) CronLine() string {
	var cmd []string
	for _, e := range s.Env {
		name, value, _ := strings.Cut(e, "=")
		cmd = append(cmd, name+"="+cronQuote(value))
	}
	for _, w := range s.Command {
		cmd = append(cmd, cronQuote(w))
	}
	return fmt.Sprintf("%d %d * * * cd %s && %s >> %s 2>&1", s.Minute, s.Hour, cronQuote(s.Dir), strings.Join(cmd, " "), cronQuote(s.Log))
}

// InstallCron returns crontab with this schedule's entry (marker line, then
// job line) in place of any earlier one for the same ID, at the end.
func (s Schedule) InstallCron(crontab string) string {
	lines := strings.Split(strings.TrimRight(crontab, "\n"), "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if lines[i] == s.Marker() {
			i++ // and the job below it
			continue
		}
		if lines[i] != "" || len(out) > 0 {
			out = append(out, lines[i])
		}
	}
	out = append(out, s.Marker(), s.CronLine())
	return strings.Join(out, "\n") + "\n"
}

// UnitName is the systemd unit name (without suffix) of the schedule.
func (s Schedule) UnitName() string { return "teammem-dream-" + s.ID }

// SystemdUnits returns the service and timer of a systemd user timer
// running the schedule; Persistent= runs a dream missed while the machine
// was off at the next boot.
func (s Schedule) SystemdUnits() (service, timer string) {
	var exec []string
	for _, w := range s.Command {
		exec = append(exec, systemdQuote(w))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[Unit]\nDescription=teammem nightly dream (%s)\n\n[Service]\nType=oneshot\n", s.ID)
	fmt.Fprintf(&b, "WorkingDirectory=%s\n", systemdQuote(s.Dir))
	for _, e := range s.Env {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote(e))
	}
	fmt.Fprintf(&b, "ExecStart=%s\n", strings.Join(exec, " "))
	fmt.Fprintf(&b, "StandardOutput=append:%s\nStandardError=append:%s\n", systemdEscape(s.Log), systemdEscape(s.Log))
	service = b.String()
	timer = fmt.Sprintf("[Unit]\nDescription=teammem nightly dream (%s)\n\n[Timer]\nOnCalendar=*-*-* %02d:%02d:00\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n",
		s.ID, s.Hour, s.Minute)
	return service, timer
}

// cronSafe matches words that need no quoting in a crontab command.
var cronSafe = regexp.MustCompile(`^[A-Za-z0-9_@+=:,./-]+$`)

// cronQuote quotes s for the shell cron runs and escapes %.
func cronQuote(s string) string {
	if !cronSafe.MatchString(s) {
		s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.ReplaceAll(s, "%", `\%`)
}

// systemdQuote quotes a word for a unit file's command line or setting:
// double quotes with \ and " escaped, and % doubled (systemd specifiers).
func systemdQuote(s string) string {
	s = systemdEscape(s)
	if cronSafe.MatchString(s) {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// systemdEscape doubles %, which systemd would read as a specifier.
func systemdEscape(s string) string { return strings.ReplaceAll(s, "%", "%%") }
