package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/testing/fixtures"
)

// options is the bench's configuration, from flags; zero values of the
// sizing fields take the defaults of the chosen mode (quick or full).
type options struct {
	quick    bool
	generate bool
	only     map[string]bool // sections to run; nil = all
	drivers  map[string]bool
	pgURL    string
	binDir   string
	gitleaks string
	profile  string // directory for CPU profiles; set = in-process server
	fixtures string
	keep     bool
	// serverEnv is extra NAME=value settings for the server processes.
	serverEnv []string

	conns, pushConns int
	warmup, dur      time.Duration
	rounds           int
	samples          int           // watch propagation samples
	syncSamples      int           // one-of-200 sync samples
	debounce         time.Duration // teammem watch --debounce of the propagation p50; 0 = its default
	syncDebounce     time.Duration // teammem watch --debounce of the one-of-200 change; 0 = its default
	scanMB           float64
	crossDur         time.Duration // each phase of the cross-org workload

	// Scale generator.
	databaseURL                         string
	orgs, repos, entries, genEntryBytes int
	scaleRequests                       int
	fsck                                bool
}

// sections a run can be narrowed to with --only.
var sections = []string{"http", "memstores", "scan", "prop", "cross", "scale"}

// parseOptions reads the command line.
func parseOptions(args []string, stderr io.Writer) (options, error) {
	var o options
	fs, only, drivers := o.flags(stderr)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *only != "" {
		o.only = map[string]bool{}
		for s := range strings.SplitSeq(*only, ",") {
			if !slices.Contains(sections, s) {
				return o, fmt.Errorf("--only %q: sections are %s", s, strings.Join(sections, ","))
			}
			o.only[s] = true
		}
	}
	o.drivers = map[string]bool{}
	for d := range strings.SplitSeq(*drivers, ",") {
		if d != "sqlite" && d != "postgres" {
			return o, fmt.Errorf("--drivers %q: want sqlite and/or postgres", d)
		}
		o.drivers[d] = true
	}
	if o.generate && o.databaseURL == "" {
		return o, fmt.Errorf("--generate needs --database-url")
	}
	o.fill()
	return o, nil
}

// flags defines the command line flags on o; --only and --drivers are
// returned for parseOptions to check.
func (o *options) flags(stderr io.Writer) (fs *flag.FlagSet, only, drivers *string) {
	fs = flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	only = fs.String("only", "", "comma-separated sections to run: "+strings.Join(sections, ","))
	drivers = fs.String("drivers", "sqlite,postgres", "databases to run the server on; postgres is skipped when unreachable")
	fs.BoolVar(&o.quick, "quick", false, "short measurements and a small scale database: under a minute")
	fs.BoolVar(&o.generate, "generate", false, "only fill --database-url with generated orgs, repos and entries, then exit")
	fs.StringVar(&o.pgURL, "pg-url", "", "Postgres admin URL (default TEAMMEM_TEST_DATABASE_URL, else "+localPG+")")
	fs.StringVar(&o.binDir, "bin-dir", "", "use teammem-server and teammem from this directory instead of building them")
	fs.StringVar(&o.gitleaks, "gitleaks", "", "use this gitleaks binary instead of go install "+gitleaksModule)
	fs.StringVar(&o.profile, "profile", "", "serve in-process and write a CPU profile per workload into this directory (numbers then include the load generator)")
	fs.StringVar(&o.fixtures, "fixtures", "", "real-world fixtures directory (default TEAMMEM_FIXTURES, else shared/fixtures next to the module root, found by internal/testing/fixtures)")
	fs.BoolVar(&o.keep, "keep", false, "keep the temp directory")
	fs.IntVar(&o.conns, "conns", 8, "concurrent connections of the throughput workloads")
	fs.IntVar(&o.pushConns, "push-conns", 4, "concurrent pushers (each to its own repo)")
	fs.DurationVar(&o.warmup, "warmup", 0, "warmup of each measurement (quick 50ms, full 1s)")
	fs.DurationVar(&o.dur, "duration", 0, "length of each ours/baseline pair of a round, split in halves run baseline, ours, ours, baseline (quick 800ms, full 5s)")
	fs.IntVar(&o.rounds, "rounds", 0, "rounds of each ours/baseline pair, median kept (quick 1, full 3)")
	fs.IntVar(&o.samples, "samples", 0, "watch propagation samples (quick 5, full 20)")
	fs.IntVar(&o.syncSamples, "sync-samples", 0, "one-of-200 change samples, each of teammem watch, the teammem sync CLI and git (quick 3, full 10)")
	fs.DurationVar(&o.debounce, "debounce", 0, "teammem watch --debounce of the watch propagation p50 (default: the client's own, 2s)")
	fs.DurationVar(&o.syncDebounce, "sync-debounce", 20*time.Millisecond, "teammem watch --debounce of the one-of-200 change timed against git; 0 = the client's own, 2s")
	fs.DurationVar(&o.crossDur, "cross-duration", 0, "each of the cross-org workload's three phases: org B alone, under org A's large batches, under its refused pushes (quick 1s, full 5s)")
	fs.Float64Var(&o.scanMB, "scan-mb", 0, "size of the secret scan corpus in MB (quick 0.5, full 5)")
	fs.StringVar(&o.databaseURL, "database-url", "", "--generate: the database to fill (sqlite://path or postgres://...)")
	fs.IntVar(&o.orgs, "orgs", 0, "scale: orgs (quick 10, full 100)")
	fs.IntVar(&o.repos, "repos", 0, "scale: repos, spread over the orgs (quick 500, full 10000)")
	fs.IntVar(&o.entries, "entries", 0, "scale: entries per team space (quick 20, full 100)")
	fs.IntVar(&o.genEntryBytes, "entry-bytes", 1024, "scale: bytes per generated entry")
	fs.IntVar(&o.scaleRequests, "scale-requests", 0, "scale: requests per latency measurement (quick 100, full 400)")
	fs.BoolVar(&o.fsck, "fsck", false, "--generate: check every generated space with teammem.Fsck afterwards")
	fs.Func("server-env", "extra NAME=value for the server processes, e.g. GOMEMLIMIT=40MiB (repeatable)", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("want NAME=value")
		}
		o.serverEnv = append(o.serverEnv, v)
		return nil
	})
	return fs, only, drivers
}

// fill replaces unset sizes with the mode's defaults.
func (o *options) fill() {
	pick := func(quick, full int) int {
		if o.quick {
			return quick
		}
		return full
	}
	set := func(dst *int, quick, full int) {
		if *dst == 0 {
			*dst = pick(quick, full)
		}
	}
	setDur := func(dst *time.Duration, quick, full time.Duration) {
		if *dst == 0 {
			*dst = time.Duration(pick(int(quick), int(full)))
		}
	}
	setDur(&o.warmup, 50*time.Millisecond, time.Second)
	setDur(&o.dur, 800*time.Millisecond, 5*time.Second)
	setDur(&o.crossDur, time.Second, 5*time.Second)
	set(&o.rounds, 1, 3)
	set(&o.samples, 5, 20)
	set(&o.syncSamples, 3, 10)
	set(&o.orgs, 10, 100)
	set(&o.repos, 500, 10000)
	set(&o.entries, 20, 100)
	set(&o.scaleRequests, 100, 400)
	if o.scanMB == 0 {
		o.scanMB = map[bool]float64{true: 0.5, false: 5}[o.quick]
	}
}

// want reports whether a section is to run.
func (o options) want(section string) bool { return o.only == nil || o.only[section] }

// fixturesDir returns the real-world fixtures directory: --fixtures, else what
// the tests use (internal/testing/fixtures: TEAMMEM_FIXTURES, else shared/fixtures
// beside the module root). It returns "" and no error when they are absent,
// and an error when --fixtures or TEAMMEM_FIXTURES names no directory.
func (b *bench) fixturesDir() (string, error) {
	if dir := b.opt.fixtures; dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return "", fmt.Errorf("--fixtures %s: not a directory", dir)
		}
		return dir, nil
	}
	dir, err := fixtures.FindFrom(b.root)
	if errors.Is(err, fixtures.ErrNotFound) {
		return "", nil
	}
	return dir, err
}
