package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// loopSpec describes a closed-loop load: conns workers, each starting its
// next operation as soon as the previous one finished. Operations that do
// not start and end inside the measured window (after warmup, for dur) are
// not counted.
type loopSpec struct {
	conns  int
	warmup time.Duration
	dur    time.Duration
	kinds  int // number of operation kinds (1 when 0), for per-kind latencies
	// every, when set, paces each worker: it starts an operation at most
	// once per every, so the offered load is fixed rather than as much as
	// the server takes.
	every time.Duration
	// tail counts operations that started in the window but ended after
	// it: a slow one near the end is still one the window measured.
	tail bool
}

// op runs worker conn's seq-th operation and says which kind it was.
type op func(conn, seq int) (kind int, err error)

// loadResult is what a load measured.
type loadResult struct {
	requests int
	errors   int
	firstErr string
	elapsed  time.Duration
	lat      []time.Duration   // every counted operation, sorted
	byKind   [][]time.Duration // per kind, sorted
}

// rps returns the counted operations per second.
func (r loadResult) rps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// pct returns the q-quantile (0..1) of sorted latencies, in milliseconds.
func pct(lat []time.Duration, q float64) float64 {
	if len(lat) == 0 {
		return 0
	}
	i := int(q * float64(len(lat)-1))
	return float64(lat[i]) / float64(time.Millisecond)
}

// worker is one connection's share of a load.
type worker struct {
	lat      []time.Duration
	kinds    []int
	errors   int
	firstErr string
}

// runLoop runs fn as spec says, until the window ends or ctx is done.
func runLoop(ctx context.Context, spec loopSpec, fn op) (loadResult, error) {
	start := time.Now()
	from, until := start.Add(spec.warmup), start.Add(spec.warmup+spec.dur)
	workers := make([]worker, spec.conns)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() { workers[i].run(ctx, i, fn, spec, from, until) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return loadResult{elapsed: spec.dur, byKind: make([][]time.Duration, max(1, spec.kinds))}, err
	}
	return collect(workers, spec.dur, spec.kinds), nil
}

// driveUntil runs fn on conns workers, each starting its next operation as
// soon as its last one returned, until stop is closed or ctx is done, and
// returns once every operation has, counting them all. first is closed
// when worker 0's first operation returned: the load is then under way.
func driveUntil(ctx context.Context, conns, kinds int, stop <-chan struct{}, first chan<- struct{}, fn op) loadResult {
	start := time.Now()
	workers := make([]worker, conns)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			w := &workers[i]
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				case <-ctx.Done():
					return
				default:
				}
				t0 := time.Now()
				kind, err := fn(i, seq)
				w.record(kind, time.Since(t0), err)
				if i == 0 && seq == 0 {
					close(first)
				}
			}
		})
	}
	wg.Wait()
	return collect(workers, time.Since(start), kinds)
}

// collect sums up the workers of a load that ran for elapsed.
func collect(workers []worker, elapsed time.Duration, kinds int) loadResult {
	res := loadResult{elapsed: elapsed, byKind: make([][]time.Duration, max(1, kinds))}
	for _, w := range workers {
		res.requests += len(w.lat)
		res.errors += w.errors
		if res.firstErr == "" {
			res.firstErr = w.firstErr
		}
		res.lat = append(res.lat, w.lat...)
		for j, k := range w.kinds {
			res.byKind[k] = append(res.byKind[k], w.lat[j])
		}
	}
	slices.Sort(res.lat)
	for _, k := range res.byKind {
		slices.Sort(k)
	}
	return res
}

// record counts one operation: its latency and kind, or its error.
func (w *worker) record(kind int, lat time.Duration, err error) {
	if err != nil {
		w.errors++
		if w.firstErr == "" {
			w.firstErr = err.Error()
		}
		return
	}
	w.lat = append(w.lat, lat)
	w.kinds = append(w.kinds, kind)
}

func (w *worker) run(ctx context.Context, id int, fn op, spec loopSpec, from, until time.Time) {
	for seq := 0; ctx.Err() == nil; seq++ {
		t0 := time.Now()
		if t0.After(until) {
			return
		}
		kind, err := fn(id, seq)
		t1 := time.Now()
		if err != nil || !(t0.Before(from) || (t1.After(until) && !spec.tail)) {
			w.record(kind, t1.Sub(t0), err)
		}
		if wait := time.Until(t0.Add(spec.every)); spec.every > 0 && wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
	}
}

// call is one HTTP request a load sends and the status it expects.
type call struct {
	kind int
	req  []byte
	want int
	seen func(response) // when set, is given each response of the wanted status
}

// runHTTP runs a closed-loop HTTP load against addr, one keep-alive
// connection per worker; next returns worker conn's seq-th request.
func runHTTP(ctx context.Context, addr string, spec loopSpec, next func(conn, seq int) call) (loadResult, error) {
	conns := make([]*rawConn, spec.conns)
	for i := range conns {
		c, err := dialRaw(addr)
		if err != nil {
			return loadResult{}, err
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	return runLoop(ctx, spec, func(conn, seq int) (int, error) {
		cl := next(conn, seq)
		resp, err := conns[conn].do(cl.req, false)
		if err != nil {
			conns[conn].Close()
			if c, derr := dialRaw(addr); derr == nil {
				conns[conn] = c
			}
			return cl.kind, fmt.Errorf("request failed: %w", err)
		}
		if resp.status != cl.want {
			return cl.kind, fmt.Errorf("status %d, want %d", resp.status, cl.want)
		}
		if cl.seen != nil {
			cl.seen(resp)
		}
		return cl.kind, nil
	})
}

// median returns the median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
