package httpapi

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"unicode"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
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
	// apiMCP is the Model Context Protocol, at /mcp and through
	// `teammem mcp` (mcp.go).
	apiMCP = "mcp"
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

// write hands a dialect's call to the Writer, the one write path, with
// what only the server knows around it: the key's rate limit and the
// request's lock timing before, the metrics and audit of its outcome and
// the memory store cache after. The Writer finds the space itself, through
// the store's head cache, and keeps that cache true.
func (s *Server) write(ctx context.Context, call teammem.WriteCall) (teammem.WriteResult, error) {
	if err := s.limiter.allowWrite(call.Principal, s.now()); err != nil {
		s.recordWrite(ctx, call.Principal, call.API, call.Repo, teammem.WriteResult{}, err)
		return teammem.WriteResult{}, err
	}
	if c := reqContextOf(ctx); c != nil {
		call.Timing = &c.timing
	}
	return s.commit(ctx, call)
}

// commit is write after the rate limit: the Writer, then the metrics and
// audit of the outcome and the memory store cache.
func (s *Server) commit(ctx context.Context, call teammem.WriteCall) (teammem.WriteResult, error) {
	res, err := s.writer.Write(ctx, call)
	s.recordWrite(ctx, call.Principal, call.API, call.Repo, res, err)
	switch code := teammem.ErrorCode(err); {
	case code == teammem.EUnavailable || code == teammem.EInternal:
		// The write may have committed all the same: a cached store of the
		// space may be behind.
		s.cache.storeMoved(teammem.SpaceKeyOf(call.Principal, call.Repo, call.Scope), math.MaxInt64)
	case err == nil && !res.Noop():
		s.cache.storeMoved(teammem.SpaceKey{Org: call.Principal.Org.ID, Repo: call.Repo, Scope: res.Space.Scope, User: res.Space.UserID},
			res.Space.Version)
	}
	return res, err
}

// The metrics and audit of a write, whichever dialect made it.

// pushOutcome names the metric outcome of a write's error: its reason's
// (pushRefusals), else its code's.
func pushOutcome(res teammem.WriteResult, err error) string {
	if o := pushRefusals[teammem.ErrorReason(err)].outcome; o != "" {
		return o
	}
	switch teammem.ErrorCode(err) {
	case "":
		if res.Held() {
			return "held"
		}
		if res.Noop() {
			return "noop"
		}
		return "ok"
	case teammem.EConflict, teammem.EPreconditionFailed:
		return "conflict"
	case teammem.ETooLarge:
		return "entry_too_large"
	case teammem.ESecretDetected:
		return "secret_rejected"
	case teammem.ERateLimited:
		return "rate_limited"
	case teammem.EInvalid, teammem.EForbidden, teammem.ENotFound:
		return "invalid"
	default:
		return "error"
	}
}

// pushRefusals is the push metrics' table of refusal reasons: the outcome
// label of a push refused for each ("": its code decides, in pushOutcome)
// and the cap it counts as hit ("": none).
var pushRefusals = map[teammem.Reason]struct{ outcome, cap string }{
	teammem.ReasonTooManyEntries:    {"too_many_entries", "max_entries"},
	teammem.ReasonEntryTooLarge:     {"entry_too_large", "max_entry_bytes"},
	teammem.ReasonBodyTooLarge:      {"request_too_large", "max_body_bytes"},
	teammem.ReasonSecretDetected:    {"secret_rejected", ""},
	teammem.ReasonPoisoningDetected: {"poisoning_rejected", ""},
	teammem.ReasonHeldForReview:     {"", ""}, // the stores' refusal of a write already counted as held
	teammem.ReasonArchived:          {"", ""},
	teammem.ReasonTooManyStores:     {"", ""}, // not a push
	teammem.ReasonTooManyKeys:       {"", ""}, // not a push
}

// recordWrite turns a write's result into metrics and audit events. Secret
// findings are recorded by rule id only.
func (s *Server) recordWrite(ctx context.Context, p teammem.Principal, api, repo string, res teammem.WriteResult, err error) {
	err = asTooLarge(err)
	org := p.Org.Slug
	s.metrics.Pushes.WithLabelValues(org, api, pushOutcome(res, err)).Inc()
	if teammem.ErrorCode(err) == teammem.ERateLimited {
		s.metrics.PushesSuppressed.WithLabelValues(org, "rate_limited").Inc()
	}
	if err != nil {
		if c := pushRefusals[teammem.ErrorReason(err)].cap; c != "" {
			s.metrics.CapsHit.WithLabelValues(org, c).Inc()
		}
		poisoned, _ := teammem.ErrorDetails(err)["findings"].([]teammem.PoisonFinding)
		for _, f := range poisoned {
			s.metrics.PoisonFindings.WithLabelValues(org, f.RuleID, "rejected").Inc()
		}
		if code := teammem.ErrorCode(err); code == teammem.ESecretDetected || code == teammem.ETooLarge || poisoned != nil {
			details := map[string]any{"api": api, "reason": nil} // the reason as the error body names it
			if c := wire.RefusalCode(teammem.ErrorReason(err)); c != "" {
				details["reason"] = c
			}
			if code == teammem.ESecretDetected {
				found, _ := teammem.ErrorDetails(err)["skippedSecrets"].([]teammem.SkippedSecret)
				details["rule_ids"] = teammem.RuleIDs(found)
			}
			if poisoned != nil {
				details["rule_ids"] = teammem.PoisonRuleIDs(poisoned)
			}
			if s.refuseSecret(p.Org, "repo", repo) != nil {
				repo = "" // a refused push never stores a slug nobody scanned clean
			}
			s.audit(ctx, p, "push.rejected", repo, "", details)
		}
		return
	}
	action := "flagged"
	if res.Held() {
		action = "held"
		s.metrics.Proposals.WithLabelValues(org, "created").Inc()
	} else if res.Noop() {
		s.metrics.PushesSuppressed.WithLabelValues(org, "noop").Inc()
	}
	for _, f := range res.Findings {
		s.metrics.PoisonFindings.WithLabelValues(org, f.RuleID, action).Inc()
	}
	if n := len(res.Written) + len(res.Deleted); n > 0 {
		s.metrics.EntriesWritten.WithLabelValues(org).Add(float64(n))
	}
	for _, f := range res.SkippedSecrets {
		s.metrics.SecretsSkipped.WithLabelValues(org, f.RuleID).Inc()
	}
	if n := len(res.SkippedTombstoned); n > 0 {
		s.metrics.TombstonesRefused.WithLabelValues(org).Add(float64(n))
	}
	// A committed write's push.secret_skipped row committed with it.
}

// audit appends an audit event; a failure is logged, never fatal to the request.
func (s *Server) audit(ctx context.Context, p teammem.Principal, action, repo, target string, details map[string]any) {
	// Round-trip details through JSON so only plain values are stored.
	if b, err := json.Marshal(details); err == nil {
		details = nil
		_ = json.Unmarshal(b, &details)
	}
	if err := s.store.AuditAppend(context.WithoutCancel(ctx), p.Org.ID, teammem.AuditEvent{ActorID: p.User.ID, Action: action,
		Repo: repo, Target: target, Details: details}); err != nil {
		s.log.ErrorContext(ctx, "audit append failed", "action", action, "error", err.Error())
	}
}
