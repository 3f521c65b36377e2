package teammem

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// WriteTiming is where a request's writes spent their time on their
// space's write lock — on SQLite the one writer every org shares, on
// Postgres the space's row lock: how long they waited for it and how long
// they held it. The store records it; the server reports it to the client
// in a Server-Timing header, so that anyone can tell a write that waited
// for another's commit from one that was slow by itself. Its zero value is
// ready to use, and a nil *WriteTiming records nothing.
type WriteTiming struct {
	wait, held atomic.Int64 // nanoseconds
	// others is the part of wait during which other orgs held the lock,
	// for stores whose lock all orgs share (SQLite).
	others atomic.Int64
	shared atomic.Bool // others was recorded
}

// Waited adds d to the time spent waiting for the lock.
func (t *WriteTiming) Waited(d time.Duration) {
	if t != nil {
		t.wait.Add(int64(d))
	}
}

// WaitedBehindOthers adds d to the part of the wait during which other
// orgs held the lock, for a store whose lock every org shares.
func (t *WriteTiming) WaitedBehindOthers(d time.Duration) {
	if t != nil {
		t.others.Add(int64(d))
		t.shared.Store(true)
	}
}

// Held adds d to the time the lock was held.
func (t *WriteTiming) Held(d time.Duration) {
	if t != nil {
		t.held.Add(int64(d))
	}
}

// ServerTiming is the value of a Server-Timing header, in milliseconds
// (lock-wait;dur=…, lock-held;dur=…, and where the lock is shared by every
// org, lock-wait-others;dur=…: the part of the wait other orgs held it),
// or "" when no write took the lock.
func (t *WriteTiming) ServerTiming() string {
	if t == nil {
		return ""
	}
	wait, held := t.wait.Load(), t.held.Load()
	if wait == 0 && held == 0 {
		return ""
	}
	v := fmt.Sprintf("lock-wait;dur=%.3f, lock-held;dur=%.3f", float64(wait)/1e6, float64(held)/1e6)
	if t.shared.Load() {
		v += fmt.Sprintf(", lock-wait-others;dur=%.3f", float64(t.others.Load())/1e6)
	}
	return v
}

// ParseServerTiming returns a metric's duration from a Server-Timing
// header value, and whether it was there.
func ParseServerTiming(header, metric string) (time.Duration, bool) {
	for part := range strings.SplitSeq(header, ",") {
		fields := strings.Split(strings.TrimSpace(part), ";")
		if strings.TrimSpace(fields[0]) != metric {
			continue
		}
		for _, f := range fields[1:] {
			if v, ok := strings.CutPrefix(strings.TrimSpace(f), "dur="); ok {
				if ms, err := strconv.ParseFloat(v, 64); err == nil {
					return time.Duration(ms * 1e6), true
				}
			}
		}
	}
	return 0, false
}
