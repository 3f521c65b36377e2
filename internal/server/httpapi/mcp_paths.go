package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/teammem/teammem/internal/teammem"
)

// The memory tool's tree over teammem's spaces: /memories holds one
// directory per scope, /memories/team and /memories/personal, and a key
// "notes/go.md" of a scope is the file /memories/<scope>/notes/go.md.

// memRoot is the root of the memory tool's tree.
const memRoot = "/memories"

// memPath is a path of the tree: the root (Scope ""), a scope's directory
// (Key "") or a key or key prefix within a scope.
type memPath struct {
	Raw   string // as the caller wrote it, for the tool's texts
	Scope teammem.Scope
	Key   string
}

// parseMemPath reads a tool's path argument, with the memory tool's texts
// for a path outside the tree.
func parseMemPath(p string) (memPath, error) {
	if !strings.HasPrefix(p, memRoot) {
		return memPath{}, fmt.Errorf("Path must start with /memories, got: %s", p)
	}
	rest := strings.Trim(strings.TrimPrefix(p, memRoot), "/")
	if rest != "" && !strings.HasPrefix(p, memRoot+"/") {
		return memPath{}, fmt.Errorf("Path must start with /memories, got: %s", p)
	}
	mp := memPath{Raw: strings.TrimSuffix(p, "/")}
	if mp.Raw == "" {
		mp.Raw = memRoot
	}
	if rest == "" {
		return mp, nil
	}
	for _, seg := range strings.Split(rest, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return memPath{}, fmt.Errorf("Path %s would escape /memories directory", p)
		}
	}
	scope, key, _ := strings.Cut(rest, "/")
	mp.Scope, mp.Key = teammem.Scope(scope), key
	if !mp.Scope.Valid() {
		return memPath{}, fmt.Errorf("The path %s does not exist. Please provide a valid path.", p)
	}
	return mp, nil
}

// uri is the tree path of a key of scope.
func memPathOf(scope teammem.Scope, key string) string {
	return memRoot + "/" + string(scope) + "/" + key
}

// mcpCall is what every tool call knows: its caller, the repo it acts on,
// and the client that made it (the MCP handshake's clientInfo).
type mcpCall struct {
	p      teammem.Principal
	repo   string
	client string
}

// callOf resolves a tool call's caller and repo: the session's bound repo
// (/mcp?repo=), else the call's repo argument. needRepo says whether the
// tool acts on one repo (search and recent may span every repo).
func (h *mcpHub) callOf(req *mcp.CallToolRequest, repoArg string, needRepo bool) (mcpCall, error) {
	var c mcpCall
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return c, errors.New("the call carries no teammem key")
	}
	c.p, _ = req.Extra.TokenInfo.Extra[mcpPrincipal].(teammem.Principal)
	if c.p.Key.ID == "" {
		return c, errors.New("the call carries no teammem key")
	}
	bound := ""
	if req.Session != nil {
		bound = h.sessionRepo(req.Session.ID())
		if ip := req.Session.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			c.client = clientName(ip.ClientInfo.Name, ip.ClientInfo.Version)
		}
	}
	repoArg = strings.TrimSpace(repoArg)
	switch {
	case bound != "" && repoArg != "" && repoArg != bound:
		return c, fmt.Errorf("this session is bound to repo %s (its URL's ?repo=); it cannot act on %s", bound, repoArg)
	case bound != "":
		c.repo = bound
	case repoArg != "":
		if err := teammem.ValidateRepoSlug(repoArg); err != nil {
			return c, errors.New(teammem.ErrorMessage(h.s.slugError(c.p.Org, repoArg, err)))
		}
		c.repo = repoArg
	case needRepo:
		return c, errors.New("name a repo: pass repo (owner/name), or connect to /mcp?repo=owner/name")
	}
	return c, nil
}

// clientName is the provenance client id of an MCP client: its name, with
// "/version" when it gave one, at most 120 bytes of valid UTF-8 (as
// clientID bounds the other dialects').
func clientName(name, version string) string {
	id := strings.TrimSpace(name)
	if v := strings.TrimSpace(version); v != "" && id != "" {
		id += "/" + v
	}
	if id == "" {
		id = "mcp"
	}
	if len(id) > 120 {
		id = id[:120]
	}
	return strings.ToValidUTF8(id, "")
}

// toolError is the text of a failed call's tool result: the error's
// caller-safe message (never an internal detail, which is logged).
func (h *mcpHub) toolError(ctx context.Context, err error) error {
	var te *teammem.Error
	if errors.As(err, &te) {
		if te.Code == teammem.EInternal || te.Code == teammem.EUnavailable {
			h.s.log.LogAttrs(ctx, slog.LevelWarn, "mcp tool failed", slog.String("code", te.Code), slog.String("error", err.Error()))
		}
		return errors.New(teammem.ErrorMessage(err))
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return errors.New("the call was canceled")
	}
	return err // a tool's own text (the memory tool's messages)
}

// space loads the space of scope for c (ID 0 when never written), after
// checking that c may read or write it.
func (h *mcpHub) space(ctx context.Context, c mcpCall, scope teammem.Scope, write bool) (*spaceReq, error) {
	if err := teammem.Authorize(c.p, teammem.ScopeAction(scope, write), write); err != nil {
		return nil, err
	}
	return h.s.loadSpace(ctx, c.p, c.repo, scope, write)
}

// entries returns the live entries of c's space of scope.
func (h *mcpHub) entries(ctx context.Context, c mcpCall, scope teammem.Scope, withContent bool) ([]teammem.Entry, error) {
	sr, err := h.space(ctx, c, scope, false)
	if teammem.ErrorCode(err) == teammem.ENotFound {
		return nil, nil // a repo nobody wrote yet: its tree is empty
	}
	if err != nil || sr.space.ID == 0 {
		return nil, err
	}
	_, es, err := h.s.store.SpaceSnapshot(ctx, c.p.Org.ID, sr.space.ID, withContent)
	return es, err
}

// file reads the entry at mp, with the memory tool's text when there is none.
func (h *mcpHub) file(ctx context.Context, c mcpCall, mp memPath) (teammem.Entry, error) {
	sr, err := h.space(ctx, c, mp.Scope, false)
	if err != nil {
		return teammem.Entry{}, err
	}
	if sr.space.ID != 0 && mp.Key != "" {
		e, err := h.s.store.EntryGet(ctx, c.p.Org.ID, sr.space.ID, mp.Key)
		if err == nil || teammem.ErrorCode(err) != teammem.ENotFound {
			return e, err
		}
	}
	return teammem.Entry{}, fmt.Errorf("The path %s does not exist. Please provide a valid path.", mp.Raw)
}
