package main

import (
	"fmt"
	"syscall"
	"time"

	"github.com/teammem/teammem/internal/server/poison"
	"github.com/teammem/teammem/internal/testing/poisontest"
)

// The poisoning row (issue 21 point 8): the CPU time every poisoning rule
// together takes per MB of adversarial input (internal/testing/poisontest:
// long runs of near-matches, many partial keywords, pathological spacing,
// quoting, homoglyphs), and how that cost per byte grows with the input,
// eight times the size against one: a linear check stays near 1.

// poisonMB is the size of the adversarial input.
const poisonMB = 1

// processCPU returns the CPU time (user and system) of this process.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// poisonCPUPerByte returns the least CPU time per byte of checking content,
// over rounds runs.
func poisonCPUPerByte(content string, rounds int) float64 {
	best := 0.0
	for i := range rounds {
		start := processCPU()
		(poison.Checker{}).CheckEntry("note.md", content)
		if v := float64(processCPU()-start) / float64(len(content)); i == 0 || v < best {
			best = v
		}
	}
	return best
}

// runPoison adds the poisoning rows.
func (b *bench) runPoison() {
	rounds := max(3, b.opt.rounds)
	large := poisontest.Adversarial(poisonMB << 20)
	small := poisontest.Adversarial(poisonMB << 20 / 8)
	poisonCPUPerByte(small, 1) // warm up: the automaton and the regexes
	perLarge, perSmall := poisonCPUPerByte(large, rounds), poisonCPUPerByte(small, rounds)
	msPerMB := perLarge * (1 << 20) / float64(time.Millisecond)
	logf("poisoning checks: %.0f CPU ms per MB of adversarial input", msPerMB)
	b.rep.single(fmt.Sprintf("poisoning checks, CPU per MB of adversarial input (%d MB)", poisonMB), "poison_adversarial_cpu_ms_per_mb",
		msPerMB, "ms", none)
	b.rep.compare("poisoning checks, CPU per byte at 8× the input (linear ≈ 1)", "poison_linearity_ratio",
		perLarge, perSmall, "ns/B", atMost(2))
}
