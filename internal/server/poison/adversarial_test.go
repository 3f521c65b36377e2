package poison

import (
	"syscall"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/testing/poisontest"
)

// cpuTime returns the process's user and system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerByte returns the least CPU time per byte of checking content over
// a few runs (the least disturbed on a shared machine).
func cpuPerByte(tb testing.TB, content string) float64 {
	best := 0.0
	for i := range 3 {
		start := cpuTime(tb)
		(Checker{}).CheckEntry("note.md", content)
		if v := float64(cpuTime(tb)-start) / float64(len(content)); i == 0 || v < best {
			best = v
		}
	}
	return best
}

// TestRulesLinearOnAdversarialInput checks every rule's time is linear in
// its input: for each kind of adversarial input, checking eight times as
// much costs at most linearBound times as much per byte (a quadratic step
// costs eight times as much). Both measurements are taken in this run.
func TestRulesLinearOnAdversarialInput(t *testing.T) {
	const small, factor, linearBound = 32 << 10, 8, 3.0
	for _, k := range poisontest.Kinds {
		t.Run(k.Name, func(t *testing.T) {
			a, b := k.Make(small), k.Make(small*factor)
			cpuPerByte(t, a) // warm up: the automaton, the regexes
			pa, pb := cpuPerByte(t, a), cpuPerByte(t, b)
			// Below a few hundred microseconds the clock's tick dominates.
			floor := float64(2*time.Millisecond) / float64(len(a))
			ratio := pb / max(pa, floor)
			t.Logf("%s: %.1f ns/B at %d KB, %.1f ns/B at %d KB (ratio %.2f)", k.Name, pa, len(a)>>10, pb, len(b)>>10, ratio)
			if ratio > linearBound {
				t.Errorf("%s: %d× the input costs %.1f× as much per byte; the rules must stay linear", k.Name, factor, ratio)
			}
		})
	}
}

// BenchmarkAdversarial checks a megabyte of every kind of adversarial input
// at once and reports the CPU time it takes per MB (cpu-ms/MB).
func BenchmarkAdversarial(b *testing.B) {
	content := poisontest.Adversarial(1 << 20)
	b.SetBytes(int64(len(content)))
	start := cpuTime(b)
	for b.Loop() {
		(Checker{}).CheckEntry("note.md", content)
	}
	mb := float64(len(content)) / (1 << 20)
	b.ReportMetric(float64(cpuTime(b)-start)/float64(time.Millisecond)/float64(b.N)/mb, "cpu-ms/MB")
}
