package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
)

// target is a pass condition on one measured value.
type target struct {
	op string // ">=", "<=", "<" or "=" (exactly v)
	v  float64
}

func (t target) String() string {
	switch t.op {
	case "":
		return "-"
	case ">=":
		return fmt.Sprintf("≥ %g", t.v)
	case "<=":
		return fmt.Sprintf("≤ %g", t.v)
	case "=":
		return "equal"
	}
	return fmt.Sprintf("%s %g", t.op, t.v)
}

// ok reports whether x meets the target (true when there is none).
func (t target) ok(x float64) bool {
	switch t.op {
	case ">=":
		return x >= t.v
	case "<=":
		return x <= t.v
	case "<":
		return x < t.v
	case "=":
		return x == t.v
	}
	return true
}

var (
	none    = target{}
	atLeast = func(v float64) target { return target{">=", v} }
	atMost  = func(v float64) target { return target{"<=", v} }
	below   = func(v float64) target { return target{"<", v} }
)

// row is one line of the results table.
type row struct {
	name, ours, baseline, ratio, target, pass string
}

// report collects the table and the JSON values of one run.
type report struct {
	mu     sync.Mutex
	rows   []row
	values map[string]any
	failed []string
	notes  []string
}

func newReport() *report { return &report{values: map[string]any{}} }

// set records a JSON value; floats are rounded to three decimals.
func (r *report) set(key string, v any) {
	if f, ok := v.(float64); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			v = nil
		} else {
			v = math.Round(f*1000) / 1000
		}
	}
	r.mu.Lock()
	r.values[key] = v
	r.mu.Unlock()
}

// note adds a line printed under the table (skipped parts, errors).
func (r *report) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	logf("note: %s", msg)
	r.mu.Lock()
	r.notes = append(r.notes, msg)
	r.mu.Unlock()
}

// compare adds a row comparing ours with a baseline: ratio = ours/baseline
// is stored under key and checked against t.
func (r *report) compare(name, key string, ours, base float64, unit string, t target) {
	ratio := math.NaN()
	if base > 0 {
		ratio = ours / base
	}
	r.set(key, ratio)
	text := "n/a"
	if !math.IsNaN(ratio) {
		text = fmt.Sprintf("%.2f", ratio)
	}
	r.addRow(row{name: name, ours: fmtNum(ours, unit), baseline: fmtNum(base, unit), ratio: text}, key, ratio, t)
}

// absent adds a row for a measurement this run could not make, saying
// why; key is null in the JSON.
func (r *report) absent(name, key, why string) {
	r.set(key, nil)
	r.addRow(row{name: name, ours: why, baseline: "-", ratio: "n/a"}, key, 0, none)
}

// single adds a row with no baseline: the value itself is stored under key
// and checked against t.
func (r *report) single(name, key string, v float64, unit string, t target) {
	r.set(key, v)
	r.addRow(row{name: name, ours: fmtNum(v, unit), baseline: "-", ratio: "-"}, key, v, t)
}

// addRow appends rw after checking value against t; a miss is listed in
// targets_failed under key.
func (r *report) addRow(rw row, key string, value float64, t target) {
	rw.target, rw.pass = t.String(), "-"
	if t.op != "" {
		rw.pass = "yes"
		if math.IsNaN(value) || !t.ok(value) {
			rw.pass = "NO"
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rw.pass == "NO" {
		r.failed = append(r.failed, key)
	}
	r.rows = append(r.rows, rw)
}

// fmtNum formats a measured value with its unit.
func fmtNum(v float64, unit string) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v >= 100:
		return fmt.Sprintf("%.0f %s", v, unit)
	case v >= 10:
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return fmt.Sprintf("%.2f %s", v, unit)
}

// print writes the table, the notes and, as the last line, the JSON object.
func (r *report) print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tours\tbaseline\tratio\ttarget\tpass")
	for _, rw := range r.rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", rw.name, rw.ours, rw.baseline, rw.ratio, rw.target, rw.pass)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range r.notes {
		fmt.Fprintf(w, "note: %s\n", strings.ReplaceAll(n, "\n", "\n      "))
	}
	sort.Strings(r.failed)
	r.values["targets_failed"] = append([]string{}, r.failed...)
	b, err := json.Marshal(r.values)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
