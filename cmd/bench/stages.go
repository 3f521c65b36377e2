package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"
)

// changeListener follows a repository's live event stream as a third
// watcher would, and keeps when each change event arrived: the moment a
// commit is announced splits a propagation into A's side (file event,
// debounce, scan, push, commit) and B's (event delivery, pull, write).
type changeListener struct {
	mu     sync.Mutex
	at     []time.Time
	cancel context.CancelFunc
	done   chan struct{}
}

// listenChanges opens repo's event stream on the server at host and
// returns once the stream answered.
func listenChanges(ctx context.Context, host, repo string) (*changeListener, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/v1/repos/"+repo+"/events", nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+benchKey)
	req.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		cancel()
		return nil, fmt.Errorf("event stream of %s: status %d", repo, res.StatusCode)
	}
	l := &changeListener{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "event: change" {
				l.mu.Lock()
				l.at = append(l.at, time.Now())
				l.mu.Unlock()
			}
		}
	}()
	return l, nil
}

// firstAfter returns when the first change event after since arrived.
func (l *changeListener) firstAfter(since time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range l.at {
		if t.After(since) {
			return t, true
		}
	}
	return time.Time{}, false
}

func (l *changeListener) stop() {
	l.cancel()
	<-l.done
}

// stageSamples collects, per propagation sample, the time of each stage.
type stageSamples struct {
	announce, pull, ack []float64
}

// add records one sample: t0 the edit on A, ev the change event heard,
// file B holding the content, ack A's watcher reporting its push.
func (s *stageSamples) add(t0, ev, file, ack time.Time) {
	if !ev.IsZero() && ev.Before(file) {
		s.announce = append(s.announce, msSince(t0, ev))
		s.pull = append(s.pull, msSince(ev, file))
	}
	if !ack.IsZero() {
		s.ack = append(s.ack, msSince(t0, ack))
	}
}

// report prints the budget per stage, as medians over the samples taken:
// the debounce the watch was told to wait, the rest of A's side up to the
// commit's announcement, and B's side from the announcement to its file.
func (b *bench) reportStages(s stageSamples, debounce time.Duration) {
	if len(s.announce) == 0 {
		b.rep.note("propagation stages: no change event was heard before B held the file, so no budget per stage")
		return
	}
	deb := float64(debounce) / float64(time.Millisecond)
	a := median(s.announce)
	b.rep.single("1 of 200 stage: debounce (as configured)", "propagation_stage_debounce_ms", deb, "ms", none)
	b.rep.single("1 of 200 stage: A, file event + scan + push + commit, until announced (debounce excluded)", "propagation_stage_push_ms", max(0, a-deb), "ms", none)
	b.rep.single("1 of 200 stage: B, announcement heard + pull + file written", "propagation_stage_pull_ms", median(s.pull), "ms", none)
	if len(s.ack) > 0 {
		b.rep.set("propagation_stage_push_acknowledged_ms", median(s.ack))
	}
}
