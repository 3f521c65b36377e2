package memsync

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/teammem/teammem/internal/client/apiclient"
	"github.com/teammem/teammem/internal/client/memdir"
	"github.com/teammem/teammem/internal/teammem"
)

// Watcher keeps a memory directory in sync continuously: an initial sync,
// then a push 2 s after the last local change (at most 20 s after the
// first of a stream of changes), a pull on every server
// event (or every minute while the event stream is down), backoff on
// transient failures and suppression after permanent ones.
type Watcher struct {
	Engine   *Engine
	Debounce time.Duration // 2 s when 0
	// MaxWait bounds how long a stream of changes, each within Debounce of
	// the last, can hold back a push: 10 × Debounce when 0.
	MaxWait time.Duration
	Poll    time.Duration // 60 s when 0
	// Log hears one line per notable thing (syncs, failures, suppression).
	Log func(format string, args ...any)
	// OnSync, when set, hears every finished sync (for telemetry).
	OnSync func(rep *Report, pushed bool, d time.Duration, err error)
	// OnSuppress, when set, hears each new push suppression.
	OnSuppress func(scope teammem.Scope, reason string, status int)
}

func (w *Watcher) logf(format string, args ...any) {
	if w.Log != nil {
		w.Log(format, args...)
	}
}

// Run watches until ctx ends, then flushes pending local changes.
func (w *Watcher) Run(ctx context.Context) error {
	e := w.Engine
	debounce, poll := w.Debounce, w.Poll
	if debounce <= 0 {
		debounce = 2 * time.Second
	}
	if poll <= 0 {
		poll = time.Minute
	}
	maxWait := w.MaxWait
	if maxWait <= 0 {
		maxWait = 10 * debounce
	}
	if err := os.MkdirAll(filepath.Join(e.MemoryDir, "team"), 0o755); err != nil {
		return err
	}
	if err := w.setSuppressed(map[teammem.Scope]string{}); err != nil { // a restart clears suppression
		return err
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", e.MemoryDir, err)
	}
	defer fsw.Close()
	if err := addRecursive(fsw, e.MemoryDir); err != nil {
		return fmt.Errorf("watch %s: %w", e.MemoryDir, err)
	}

	s := &watchState{pending: map[teammem.Scope]bool{}, suppressed: map[teammem.Scope]string{}, reported: map[string]bool{},
		retry: time.NewTimer(time.Hour)}
	s.retry.Stop()
	defer s.retry.Stop()
	for _, scope := range Scopes {
		w.syncScope(ctx, s, scope, true, false)
	}
	w.logf("watching %s", e.MemoryDir)

	changes := make(chan teammem.Scope, 16)
	streamUp := make(chan bool, 4)
	sctx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	go e.Client.StreamEvents(sctx, changes, func(up bool) {
		select {
		case streamUp <- up:
		default:
		}
	})

	timer := time.NewTimer(time.Hour)
	timer.Stop()
	pollTick := time.NewTicker(poll)
	defer pollTick.Stop()
	connected := false
	var changedSince time.Time // first local change not yet pushed
	for {
		select {
		case <-ctx.Done():
			return w.flush(s)
		case ev, ok := <-fsw.Events:
			if !ok {
				return errors.New("file watcher closed")
			}
			if w.onFileEvent(fsw, s, ev) {
				if changedSince.IsZero() {
					changedSince = time.Now()
				}
				// Past MaxWait the armed timer is left to fire: a file
				// rewritten without pause still gets pushed.
				if wait := time.Since(changedSince); wait < maxWait {
					timer.Reset(min(debounce, maxWait-wait))
				}
			}
		case err := <-fsw.Errors:
			w.logf("file watcher: %v", err)
		case <-timer.C:
			changedSince = time.Time{}
			w.syncPending(ctx, s)
		case <-s.retry.C:
			w.syncPending(ctx, s)
		case scope := <-changes:
			w.syncScope(ctx, s, scope, false, true)
		case up := <-streamUp:
			if up != connected {
				connected = up
				if up {
					w.logf("live updates connected")
					s.failures = 0
					for _, scope := range Scopes { // catch up on what the gap missed, both ways
						w.syncScope(ctx, s, scope, s.pending[scope], false)
					}
				} else {
					w.logf("live updates lost; polling every %s", poll)
				}
			}
		case <-pollTick.C:
			if !connected && !s.backingOff() {
				for _, scope := range Scopes {
					w.syncScope(ctx, s, scope, false, false)
				}
			}
		}
	}
}

// watchState is the watcher loop's own state; only the loop touches it.
type watchState struct {
	pending    map[teammem.Scope]bool
	suppressed map[teammem.Scope]string
	reported   map[string]bool // skip messages already logged
	failures   int             // consecutive transient failures
	retry      *time.Timer     // fires when pending pushes should be retried
	retryAt    time.Time       // when it fires; until then nothing is sent
}

// backingOff reports whether a transient failure's backoff is still
// running: polls and debounced pushes then wait for the retry timer rather
// than meet the same failure again.
func (s *watchState) backingOff() bool { return s.failures > 0 && time.Now().Before(s.retryAt) }

// syncPending pushes every scope with pending changes.
func (w *Watcher) syncPending(ctx context.Context, s *watchState) {
	if s.backingOff() {
		return // the retry timer pushes them
	}
	for _, scope := range Scopes {
		if s.pending[scope] && s.suppressed[scope] == "" {
			w.syncScope(ctx, s, scope, true, false)
		}
	}
}

// onFileEvent notes a local change; it reports whether a push is due.
func (w *Watcher) onFileEvent(fsw *fsnotify.Watcher, s *watchState, ev fsnotify.Event) bool {
	if memdir.IgnoredName(filepath.Base(ev.Name)) { // never synced, so never a reason to push
		return false
	}
	if ev.Has(fsnotify.Create) {
		if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
			_ = addRecursive(fsw, ev.Name) // new subdirectories are watched too
		}
	}
	scope := teammem.ScopePersonal
	rel, err := filepath.Rel(w.Engine.MemoryDir, ev.Name)
	if err != nil {
		return false
	}
	if rel == "team" || strings.HasPrefix(rel, "team"+string(filepath.Separator)) {
		scope = teammem.ScopeTeam
	}
	// Changes inside a directory Claude Code's own store sync owns are its
	// business (and arrive in bursts when it pulls): no push for them, nor
	// for anything in a scope it syncs as a whole.
	if _, native := w.Engine.scopeExcluded(scope); native {
		return false
	}
	root, _ := w.Engine.root(scope)
	if key, err := filepath.Rel(root, ev.Name); err == nil {
		if _, _, inStore := memdir.StoreDir(root, filepath.ToSlash(key)); inStore {
			return false
		}
	}
	if s.suppressed[scope] != "" {
		// Only a deletion lifts suppression (e.g. the fix for too many entries).
		if _, err := os.Lstat(ev.Name); !errors.Is(err, fs.ErrNotExist) {
			w.notPushed(s, scope, root, ev.Name)
			return false
		}
		w.logf("%s: a file was deleted; pushing again", scope)
		delete(s.suppressed, scope)
		_ = w.setSuppressed(s.suppressed)
	}
	s.pending[scope] = true
	return true
}

// notPushed logs, once per file and pause, that a change made while pushes
// are paused stays on this machine and why.
func (w *Watcher) notPushed(s *watchState, scope teammem.Scope, root, name string) {
	key, err := filepath.Rel(root, name)
	if err != nil {
		return
	}
	key = filepath.ToSlash(key)
	if id := "paused\x00" + string(scope) + "\x00" + s.suppressed[scope] + "\x00" + key; !s.reported[id] {
		s.reported[id] = true
		w.logf("%s: not pushed %s: pushes are paused (%s) until a file is deleted or teammem restarts; the file stays here", scope, key, s.suppressed[scope])
	}
}

// syncScope runs one sync (with a push when push is set; moved: the
// server announced a change, see Engine.SyncMoved) and updates the
// suppression and retry state from its outcome.
func (w *Watcher) syncScope(ctx context.Context, s *watchState, scope teammem.Scope, push, moved bool) {
	if ctx.Err() != nil {
		return
	}
	push = push && s.suppressed[scope] == ""
	start := time.Now()
	var rep *Report
	var err error
	if moved && !push {
		rep, err = w.Engine.SyncMoved(ctx, scope)
	} else {
		rep, err = w.Engine.Sync(ctx, scope, true, push)
	}
	if w.OnSync != nil {
		w.OnSync(rep, push, time.Since(start), err)
	}
	if err == nil {
		if push {
			s.pending[scope] = false
		}
		s.failures = 0
		w.report(s, rep)
		return
	}
	if ctx.Err() != nil {
		return
	}
	if apiclient.IsPermanent(err) && push {
		reason := fmt.Sprintf("http_%d", apiclient.StatusOf(err))
		s.suppressed[scope] = reason
		s.pending[scope] = false
		_ = w.setSuppressed(s.suppressed)
		if w.OnSuppress != nil {
			w.OnSuppress(scope, reason, apiclient.StatusOf(err))
		}
		w.logf("%s: %v — pushes paused until a file is deleted or teammem restarts", scope, err)
		return
	}
	// Transient (network, 5xx, 409/429): keep the changes pending and retry
	// with backoff; no busy loop while the server is away.
	if push {
		s.pending[scope] = true
	}
	s.failures++
	backoff := min(time.Duration(1<<min(s.failures, 6))*time.Second, time.Minute)
	wait := apiclient.Jitter(backoff)
	s.retry.Reset(wait)
	s.retryAt = time.Now().Add(wait)
	w.logf("%s: %v — retrying in %s", scope, err, backoff)
}

// report logs what a sync changed, when it changed anything, and each
// skipped file and directory left alone once.
func (w *Watcher) report(s *watchState, rep *Report) {
	if rep == nil {
		return
	}
	parts := []string{}
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(len(rep.Pulled), "pulled")
	add(len(rep.RemovedLocal), "removed")
	add(len(rep.Pushed), "pushed")
	add(len(rep.DeletedRemote), "deleted on the server")
	add(len(rep.Merged), "merged")
	if len(parts) > 0 {
		w.logf("%s: %s (version %d)", rep.Scope, strings.Join(parts, ", "), rep.Version)
	}
	for _, n := range rep.Notices() {
		w.logf("%s: %s", rep.Scope, n)
	}
	for _, ex := range rep.Excluded {
		if id := "excluded\x00" + ex.Dir; !s.reported[id] {
			s.reported[id] = true
			w.logf("%s: left alone %s: %s", rep.Scope, ex.Dir, ex.Reason)
		}
	}
	for _, sk := range rep.Skipped {
		if id := string(rep.Scope) + "\x00" + sk.Key + "\x00" + sk.Message(); !s.reported[id] {
			s.reported[id] = true
			w.logf("%s: skipped %s: %s", rep.Scope, sk.Key, sk.Message())
		}
	}
}

// flush pushes pending changes once more before exiting.
func (w *Watcher) flush(s *watchState) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, scope := range Scopes {
		if s.pending[scope] && s.suppressed[scope] == "" {
			rep, err := w.Engine.Sync(ctx, scope, false, true)
			switch {
			case err != nil:
				w.logf("%s: final push failed: %v", scope, err)
			case len(rep.Pushed)+len(rep.DeletedRemote) > 0:
				w.logf("%s: pushed %d pending changes before exit", scope, len(rep.Pushed)+len(rep.DeletedRemote))
			}
		}
	}
	return nil
}

// setSuppressed persists suppression so that `teammem status` can show it.
func (w *Watcher) setSuppressed(reasons map[teammem.Scope]string) error {
	unlock, err := w.Engine.States.Lock()
	if err != nil {
		return err
	}
	defer unlock()
	st, err := w.Engine.States.Load()
	if err != nil {
		return err
	}
	for _, scope := range Scopes {
		ss := st.Scope(scope)
		if r := reasons[scope]; r != ss.Suppressed {
			ss.Suppressed = r
			ss.SuppressedAt = time.Now().UTC()
			if r == "" {
				ss.SuppressedAt = time.Time{}
			}
		}
	}
	return w.Engine.States.Save(st)
}

// addRecursive watches dir and every directory below it (not symlinks).
func addRecursive(fsw *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if d.IsDir() {
			return fsw.Add(p)
		}
		return nil
	})
}
