package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// An open event stream follows its key's authorization: it re-reads the key,
// its user and org before every announcement (through the auth cache, which
// revocations on this replica and, via the broker, on others invalidate)
// and every Config.StreamRecheck from the database itself, and ends with an
// "error" event once the key may no longer read.

// streamGuard is what a stream knows of its caller.
type streamGuard struct {
	hash     [32]byte          // of the key the stream was opened with
	p        teammem.Principal // as of the last check
	personal bool              // whether p may read its personal space
}

// streamAllowed re-checks g's key, fresh from the database or through the
// cache, and updates g (a role may have changed). When the key may no
// longer read it writes the error event and reports false; so it does,
// without an event, when the check itself fails (the client reconnects and
// is answered then).
func (s *Server) streamAllowed(w http.ResponseWriter, r *http.Request, g *streamGuard, fresh bool) bool {
	p, err := s.lookupKey(r.Context(), g.hash, s.now(), fresh)
	if err == nil {
		err = teammem.Authorize(p, teammem.ActTeamRead, false)
	}
	if err == nil {
		g.p, g.personal = p, teammem.Authorize(p, teammem.ActPersonalRead, false) == nil
		return true
	}
	code := teammem.ErrorCode(err)
	if code != teammem.EUnauthorized && code != teammem.EForbidden {
		if r.Context().Err() == nil { // not merely the client going away
			s.log.WarnContext(r.Context(), "re-checking an event stream's key failed", "error", err.Error())
		}
		return false
	}
	reason := refusalOf(p, s.now())
	if reason == "" {
		if reason, _ = teammem.ErrorDetails(err)["reason"].(string); reason == "" {
			reason = wire.RefusedKeyUnknown
		}
	}
	body, _ := json.Marshal(wire.ErrorBody{Error: wire.ErrorObject{Type: code, Message: teammem.ErrorMessage(err),
		Details: wire.StreamEndedDetails{Reason: reason}.Map()}})
	fmt.Fprintf(w, "event: error\ndata: %s\n\n", body)
	_ = http.NewResponseController(w).Flush()
	return false
}

// streamCounter counts the event streams each key holds open on this
// replica, to cap them: every stream holds a goroutine, a subscription and
// a connection.
type streamCounter struct {
	mu   sync.Mutex
	open map[string]int
}

// acquire counts a new stream of key, or refuses it with ERateLimited when
// the key already holds max (0: no cap). release must be called once the
// stream ends.
func (c *streamCounter) acquire(key string, max int) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if max > 0 && c.open[key] >= max {
		return nil, teammem.Errorf(teammem.ERateLimited,
			"this key already holds %d open event streams, the most allowed; close one first", max).
			WithDetails(map[string]any{"retry_after_seconds": streamRetrySeconds, "limit": "key_streams", "max_streams_per_key": max})
	}
	c.open[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.open[key]--; c.open[key] <= 0 {
				delete(c.open, key)
			}
		})
	}, nil
}

// streamRetrySeconds is the Retry-After of a stream refused by the cap: a
// slot frees only when another stream of the key ends.
const streamRetrySeconds = 30
