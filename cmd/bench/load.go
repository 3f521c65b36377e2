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
	// it, for a background load whose every operation matters.
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
	res := loadResult{elapsed: spec.dur, byKind: make([][]time.Duration, max(1, spec.kinds))}
	if err := ctx.Err(); err != nil {
		return res, err
	}
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
	return res, nil
}

func (w *worker) run(ctx context.Context, id int, fn op, spec loopSpec, from, until time.Time) {
	for seq := 0; ctx.Err() == nil; seq++ {
		t0 := time.Now()
		if t0.After(until) {
			return
		}
		kind, err := fn(id, seq)
		t1 := time.Now()
		switch {
		case err != nil:
			w.errors++
			if w.firstErr == "" {
				w.firstErr = err.Error()
			}
		case t0.Before(from) || (t1.After(until) && !spec.tail):
		default:
			w.lat = append(w.lat, t1.Sub(t0))
			w.kinds = append(w.kinds, kind)
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
