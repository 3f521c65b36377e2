package httpapi

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode"

	"github.com/teammem/teammem/internal/teammem"
)

// The dialect labels of writes, for metrics and audit.
const (
	apiV1         = "v1"
	apiClaudeCode = "claude_code"
	// apiMemoryStores is Anthropic's public Memory Stores API and
	// apiClaudeCodeMemory Claude Code's memory-service dialect, on the same
	// routes (see memstoreDialect for how a request is told apart).
	apiMemoryStores     = "memory_stores"
	apiClaudeCodeMemory = "claude_code_memory"
)

// writeCall is the teammem.WriteCall of a request: its caller, client and
// Claude Code session (the provenance every version records, on every
// dialect), and the space its path names.
func writeCall(r *http.Request, p teammem.Principal, api, repo string, scope teammem.Scope, req teammem.WriteRequest) teammem.WriteCall {
	return teammem.WriteCall{Principal: p, Repo: repo, Scope: scope, ClientID: clientID(r), API: api, Request: req,
		SessionID: sessionID(r)}
}

// sessionHeader names the Claude Code session a write comes from: the
// teammem client sets it from hook input.
const sessionHeader = "X-Claude-Code-Session-Id"

// sessionID is the Claude Code session a request says it comes from, at
// most 128 bytes of valid UTF-8 without control characters ("" when none).
func sessionID(r *http.Request) string {
	v := strings.TrimSpace(r.Header.Get(sessionHeader))
	if len(v) > 128 {
		v = v[:128]
	}
	v = strings.ToValidUTF8(v, "")
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return ""
	}
	return v
}

// write hands a dialect's call to the Writer with what only the server
// knows around it: the key's rate limit and the space from the head cache
// before, the committed head back into the cache and the metrics after.
func (s *Server) write(ctx context.Context, call teammem.WriteCall) (teammem.WriteResult, error) {
	res, err := s.admitAndWrite(ctx, call)
	s.recordWrite(ctx, call.Principal, call.API, call.Repo, res, err)
	if code := teammem.ErrorCode(err); code == teammem.EUnavailable || code == teammem.EInternal {
		// The write may have committed all the same (the connection died
		// at COMMIT): the next read of the space goes to the database, so
		// a client that retries or reads sees what is there.
		s.cache.spaceMoved(spaceHeadKey(call.Principal, call.Repo, call.Scope), math.MaxInt64)
	}
	hk := headKey{org: call.Principal.Org.ID, repo: call.Repo, scope: res.Space.Scope, user: res.Space.UserID}
	switch code := teammem.ErrorCode(err); {
	case err == nil && !res.Noop():
		// The committed head is the newest there is: the next pull or push
		// of the space on this replica reads nothing.
		s.cache.putHead(hk, res.Repo, res.Space, time.Now())
		s.cache.spaceMoved(hk, res.Space.Version) // its store, if cached, is behind
	case res.Space.ID != 0 && (err == nil || code == teammem.EPreconditionFailed || code == teammem.EConflict):
		// The write changed nothing, or was refused for its base, after
		// reading the head under the space's lock: that head is committed
		// and as new as any. Caching it means a head this replica holds
		// wrongly (a read that raced a write) is corrected by the first
		// write it makes fail, instead of refusing every retry until the
		// TTL ends (putHead never goes back to an older version).
		s.cache.correctHead(hk, res.Repo, res.Space, time.Now())
	}
	return res, err
}

func (s *Server) admitAndWrite(ctx context.Context, call teammem.WriteCall) (teammem.WriteResult, error) {
	if err := s.limiter.allowWrite(call.Principal, s.now()); err != nil {
		return teammem.WriteResult{}, err
	}
	if call.Target.Space.ID != 0 {
		// A memory store request names its space by id: it was loaded, and
		// its repo exists (and was checked when it was made).
		if err := s.refuseSecret(call.Principal.Org, "client", call.ClientID); err != nil {
			return teammem.WriteResult{}, err
		}
		return s.writer.Write(ctx, call)
	}
	sr, err := s.loadSpace(ctx, call.Principal, call.Repo, call.Scope, true)
	var te *teammem.Error
	switch {
	case errors.As(err, &te) && te.Code == teammem.ENotFound:
		call.Missing = err // said only to a caller who may write
	case err != nil:
		return teammem.WriteResult{}, err
	default:
		if err := s.refuseWriteSecrets(sr, call.ClientID); err != nil {
			return teammem.WriteResult{}, err
		}
		call.Target = teammem.Target{Repo: sr.repo, Space: sr.space}
	}
	return s.writer.Write(ctx, call)
}
