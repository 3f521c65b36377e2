package dream_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/client/jobs/dream"
)

// TestNightlyTimeInRange: over many draws every time lies between 00:00
// and 05:59, and every hour and minute shows up.
func TestNightlyTimeInRange(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	hours, minutes := map[int]bool{}, map[int]bool{}
	for range 20000 {
		h, m := dream.NightlyTime(r)
		if h < 0 || h > 5 || m < 0 || m > 59 {
			t.Fatalf("drew %02d:%02d", h, m)
		}
		hours[h], minutes[m] = true, true
	}
	if len(hours) != 6 || len(minutes) != 60 {
		t.Fatalf("drew %d distinct hours and %d minutes, want 6 and 60", len(hours), len(minutes))
	}
}

func TestScheduleCron(t *testing.T) {
	t.Parallel()
	s := dream.Schedule{Hour: 3, Minute: 7, Dir: "/home/me/src/my app", Command: []string{"/usr/bin/teammem", "dream", "--min-hours", "20"},
		Env: []string{"TEAMMEM_LLM_MODEL=qwen 3", "TEAMMEM_MEMORY_MODE=log"}, Log: "/home/me/.config/teammem/local/ab/dream%.log", ID: "ab12"}
	want := `7 3 * * * cd '/home/me/src/my app' && TEAMMEM_LLM_MODEL='qwen 3' TEAMMEM_MEMORY_MODE=log /usr/bin/teammem dream --min-hours 20 >> '/home/me/.config/teammem/local/ab/dream\%.log' 2>&1`
	if got := s.CronLine(); got != want {
		t.Fatalf("cron line\n%s\nwant\n%s", got, want)
	}
	old := "MAILTO=me\n0 1 * * * backup\n" + s.Marker() + "\n1 1 * * * old dream\n"
	got := s.InstallCron(old)
	if want := "MAILTO=me\n0 1 * * * backup\n" + s.Marker() + "\n" + s.CronLine() + "\n"; got != want {
		t.Fatalf("installed\n%s\nwant\n%s", got, want)
	}
	if again := s.InstallCron(got); again != got {
		t.Fatalf("installing twice changed the crontab:\n%s", again)
	}
	if got := s.InstallCron(""); got != s.Marker()+"\n"+s.CronLine()+"\n" {
		t.Fatalf("into an empty crontab: %q", got)
	}
}

func TestScheduleSystemd(t *testing.T) {
	t.Parallel()
	s := dream.Schedule{Hour: 0, Minute: 5, Dir: "/srv/app", Command: []string{"/opt/team mem/teammem", "dream"}, Env: []string{"TEAMMEM_MEMORY_MODE=log"},
		Log: "/var/log/d.log", ID: "cd34"}
	service, timer := s.SystemdUnits()
	for _, want := range []string{"WorkingDirectory=/srv/app\n", `ExecStart="/opt/team mem/teammem" dream` + "\n", "Environment=TEAMMEM_MEMORY_MODE=log\n",
		"StandardOutput=append:/var/log/d.log\n", "Type=oneshot\n"} {
		if !strings.Contains(service, want) {
			t.Errorf("service lacks %q:\n%s", want, service)
		}
	}
	if !strings.Contains(timer, "OnCalendar=*-*-* 00:05:00\n") || !strings.Contains(timer, "Persistent=true\n") || !strings.Contains(timer, "WantedBy=timers.target\n") {
		t.Errorf("timer:\n%s", timer)
	}
	if s.UnitName() != "teammem-dream-cd34" {
		t.Errorf("unit name %q", s.UnitName())
	}
}
