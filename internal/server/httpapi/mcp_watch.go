package httpapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teammem/teammem/internal/server/events"
	"github.com/teammem/teammem/internal/teammem"
)

// repoWatcher turns one repo's space events into MCP notifications for the
// sessions of one user: notifications/resources/updated for each changed
// key (the SDK sends it to the sessions subscribed to that URI) and
// notifications/resources/list_changed when keys appear or go.
type repoWatcher struct {
	cancel context.CancelFunc
}

func (w *repoWatcher) stop() { w.cancel() }

// spaceState is what a watcher last saw of one space: its version and keys.
type spaceState struct {
	version int64
	keys    map[string]bool
}

// watch starts the watcher of repo for p's user. It subscribes to the
// broker before reading the spaces' heads, so that no change falls between.
func (us *mcpUserServer) watch(p teammem.Principal, repo string) *repoWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	evs, unsubscribe := us.h.s.events.Subscribe(p.Org.ID, repo)
	c := mcpCall{p: p, repo: repo}
	states := map[teammem.Scope]*spaceState{}
	for _, sc := range []teammem.Scope{teammem.ScopeTeam, teammem.ScopePersonal} {
		states[sc] = us.spaceState(ctx, c, sc)
	}
	go func() {
		defer unsubscribe()
		recheck := time.NewTicker(us.h.s.cfg.StreamRecheck)
		defer recheck.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-recheck.C:
				us.h.prune(ctx, us, true)
			case e, ok := <-evs:
				if !ok {
					return
				}
				us.h.prune(ctx, us, false)
				us.apply(ctx, c, states, e)
			}
		}
	}()
	return &repoWatcher{cancel: cancel}
}

// spaceState reads the head and keys of c's space of scope (empty when it
// does not exist or may not be read).
func (us *mcpUserServer) spaceState(ctx context.Context, c mcpCall, scope teammem.Scope) *spaceState {
	st := &spaceState{keys: map[string]bool{}}
	sr, err := us.h.space(ctx, c, scope, false)
	if err != nil || sr.space.ID == 0 {
		return st
	}
	sp, es, err := us.h.s.store.SpaceSnapshot(ctx, c.p.Org.ID, sr.space.ID, false)
	if err != nil {
		return st
	}
	st.version = sp.Version
	for _, e := range es {
		st.keys[e.Key] = true
	}
	return st
}

// apply notifies the changes one event announces: the space's entries
// changed since the version the watcher last saw.
func (us *mcpUserServer) apply(ctx context.Context, c mcpCall, states map[teammem.Scope]*spaceState, e events.Event) {
	scope := teammem.Scope(e.Scope)
	st := states[scope]
	if e.Kind != "" || st == nil || scope == teammem.ScopePersonal && e.UserID != us.user || e.Version <= st.version {
		return // another kind of event, another user's space, or one seen
	}
	sr, err := us.h.space(ctx, c, scope, false)
	if err != nil || sr.space.ID == 0 {
		return
	}
	changes, err := us.h.s.store.ChangesList(ctx, c.p.Org.ID, sr.space.ID, st.version)
	if err != nil {
		us.h.s.log.LogAttrs(ctx, slog.LevelWarn, "mcp resource watch failed", slog.String("error", err.Error()))
		return
	}
	listChanged := false
	for _, ch := range changes {
		st.version = max(st.version, ch.Version)
		if ch.Deleted == st.keys[ch.Key] {
			listChanged = true // a key appeared or went
		}
		st.keys[ch.Key] = !ch.Deleted
		_ = us.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: resourceURI(c.repo, scope, ch.Key)})
	}
	if listChanged {
		us.listChanged()
	}
}

// listChanged sends notifications/resources/list_changed to the user's
// sessions. The SDK sends it when its registry changes; teammem lists
// resources itself (resourcesMiddleware), so a placeholder comes and goes,
// which the SDK coalesces into one notification.
func (us *mcpUserServer) listChanged() {
	const placeholder = resourceScheme + "list-changed"
	us.srv.AddResource(&mcp.Resource{URI: placeholder, Name: "list changed"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, mcp.ResourceNotFoundError(placeholder)
	})
	us.srv.RemoveResources(placeholder)
}
