package httpapi

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teammem/teammem/internal/teammem"
)

// MCP resources: each readable scope's MEMORY.md and topic files as
// teammem://<owner>/<name>/<scope>/<key> (an owner "host/owner" escaped as
// host%2Fowner, as in the /v1 paths), text/markdown. Subscriptions are
// driven by the server's events broker, which carries other replicas'
// writes too (the Postgres carrier).

// resourceScheme prefixes every resource URI.
const resourceScheme = "teammem://"

// maxListedResources bounds one resources/list answer.
const maxListedResources = 1000

// mcpUserServer is the mcp.Server of one user of one org, and the event
// watchers of the repos its sessions subscribed to.
type mcpUserServer struct {
	h         *mcpHub
	org, user int64
	srv       *mcp.Server
	mu        sync.Mutex
	subs      map[string]int // subscriptions per resource URI
	watchers  map[string]*repoWatcher
}

func newMCPUserServer(h *mcpHub, org, user int64) *mcpUserServer {
	us := &mcpUserServer{h: h, org: org, user: user, subs: map[string]int{}, watchers: map[string]*repoWatcher{}}
	us.srv = mcp.NewServer(&mcp.Implementation{Name: "teammem", Version: "1"}, &mcp.ServerOptions{
		Instructions: "teammem holds this team's shared memory (/memories/team) and your own (/memories/personal). " +
			"View /memories before starting work; save what the team should know with create or str_replace.",
		KeepAlive:          mcpKeepAlive,
		SubscribeHandler:   us.subscribe,
		UnsubscribeHandler: us.unsubscribe,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{},
			Resources: &mcp.ResourceCapabilities{Subscribe: true, ListChanged: true}},
	})
	h.addMemoryTools(us.srv)
	h.addSearchTools(us.srv)
	us.srv.AddReceivingMiddleware(us.resourcesMiddleware)
	return us
}

// close ends the server's sessions and its watchers.
func (us *mcpUserServer) close() {
	for ss := range us.srv.Sessions() {
		_ = ss.Close()
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	for repo, w := range us.watchers {
		w.stop()
		delete(us.watchers, repo)
	}
}

// resourceURI is the URI of a key of a repo's scope.
func resourceURI(repo string, scope teammem.Scope, key string) string {
	owner, name := repo, ""
	if i := strings.LastIndexByte(repo, '/'); i >= 0 {
		owner, name = repo[:i], repo[i+1:]
	}
	return resourceScheme + url.PathEscape(owner) + "/" + name + "/" + string(scope) + "/" + key
}

// parseResourceURI reads a resource URI into its repo, scope and key.
func parseResourceURI(uri string) (repo string, scope teammem.Scope, key string, err error) {
	rest, ok := strings.CutPrefix(uri, resourceScheme)
	parts := strings.SplitN(rest, "/", 4)
	if !ok || len(parts) != 4 || parts[3] == "" {
		return "", "", "", errors.New("not a teammem resource URI (teammem://owner/name/scope/key)")
	}
	owner, err := url.PathUnescape(parts[0])
	if err != nil {
		return "", "", "", errors.New("the URI's owner is not validly escaped")
	}
	repo, scope, key = owner+"/"+parts[1], teammem.Scope(parts[2]), parts[3]
	if err := teammem.ValidateRepoSlug(repo); err != nil || !scope.Valid() || teammem.ValidateKey(key) != nil {
		return "", "", "", errors.New("not a teammem resource URI (teammem://owner/name/scope/key)")
	}
	return repo, scope, key, nil
}

// resourcesMiddleware answers resources/list and resources/read from the
// caller's spaces: the SDK's own registry is one list for every session,
// while what a session may read depends on its key.
func (us *mcpUserServer) resourcesMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "resources/list":
			c, err := us.callOfRequest(req)
			if err != nil {
				return nil, err
			}
			return us.list(ctx, c)
		case "resources/read":
			c, err := us.callOfRequest(req)
			if err != nil {
				return nil, err
			}
			p, _ := req.GetParams().(*mcp.ReadResourceParams)
			if p == nil {
				return nil, errors.New("resources/read needs a uri")
			}
			return us.read(ctx, c, p.URI)
		}
		return next(ctx, method, req)
	}
}

// callOfRequest is the caller and bound repo of a non-tool request.
func (us *mcpUserServer) callOfRequest(req mcp.Request) (mcpCall, error) {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	return us.h.callOf(&mcp.CallToolRequest{Session: ss, Extra: req.GetExtra()}, "", false)
}

// list lists the files of every space c may read: of its bound repo, else
// of every repo of the org.
func (us *mcpUserServer) list(ctx context.Context, c mcpCall) (*mcp.ListResourcesResult, error) {
	repos := []string{c.repo}
	if c.repo == "" {
		rs, err := us.h.s.store.RepoList(ctx, c.p.Org.ID)
		if err != nil {
			return nil, us.h.toolError(ctx, err)
		}
		repos = repos[:0]
		for _, r := range rs {
			repos = append(repos, r.Slug)
		}
	}
	out := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	for _, repo := range repos {
		c.repo = repo
		for _, sc := range []teammem.Scope{teammem.ScopeTeam, teammem.ScopePersonal} {
			es, err := us.h.entries(ctx, c, sc, false)
			if teammem.ErrorCode(err) == teammem.EForbidden || teammem.ErrorCode(err) == teammem.ENotFound {
				continue // a scope the key may not read is not listed
			} else if err != nil {
				return nil, us.h.toolError(ctx, err)
			}
			for _, e := range es {
				if len(out.Resources) == maxListedResources {
					return out, nil
				}
				out.Resources = append(out.Resources, &mcp.Resource{URI: resourceURI(repo, sc, e.Key), Name: repo + " " + string(sc) + "/" + e.Key,
					MIMEType: "text/markdown", Size: int64(e.Size)})
			}
		}
	}
	return out, nil
}

// read answers one resource's content.
func (us *mcpUserServer) read(ctx context.Context, c mcpCall, uri string) (*mcp.ReadResourceResult, error) {
	repo, scope, key, err := parseResourceURI(uri)
	if err != nil {
		return nil, err
	}
	if c.repo != "" && repo != c.repo {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	c.repo = repo
	e, err := us.h.file(ctx, c, memPath{Raw: uri, Scope: scope, Key: key})
	if err != nil {
		if code := teammem.ErrorCode(err); code == teammem.EForbidden || code == teammem.EInternal || code == teammem.EUnavailable {
			return nil, us.h.toolError(ctx, err)
		}
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: e.Content}}}, nil
}

// subscribe checks that the caller may read the resource's space and
// watches its repo's events.
func (us *mcpUserServer) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	c, err := us.callOfRequest(req)
	if err != nil {
		return err
	}
	repo, scope, _, err := parseResourceURI(req.Params.URI)
	if err != nil {
		return err
	}
	if c.repo != "" && repo != c.repo {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	if err := teammem.Authorize(c.p, teammem.ScopeAction(scope, false), false); err != nil {
		return errors.New(teammem.ErrorMessage(err))
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	us.subs[req.Params.URI]++
	if us.watchers[repo] == nil {
		us.watchers[repo] = us.watch(c.p, repo)
	}
	return nil
}

// unsubscribe drops one subscription, and the repo's watcher with its last.
func (us *mcpUserServer) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	repo, _, _, err := parseResourceURI(req.Params.URI)
	if err != nil {
		return err
	}
	us.mu.Lock()
	defer us.mu.Unlock()
	if us.subs[req.Params.URI]--; us.subs[req.Params.URI] <= 0 {
		delete(us.subs, req.Params.URI)
	}
	for uri := range us.subs {
		if r, _, _, _ := parseResourceURI(uri); r == repo {
			return nil
		}
	}
	if w := us.watchers[repo]; w != nil {
		w.stop()
		delete(us.watchers, repo)
	}
	return nil
}
