package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/teammem/teammem/internal/client/apiclient"
	memsync "github.com/teammem/teammem/internal/client/memsync"
	"github.com/teammem/teammem/internal/teammem"
)

// telemetry batches client events for /v1/telemetry/events. It is off
// unless TEAMMEM_TELEMETRY=1 (or true/yes/on); events carry counts, flags
// and rule ids — never content, paths or secrets.
type telemetry struct {
	client *apiclient.Client
	mu     sync.Mutex
	events []telemetryEvent
}

type telemetryEvent struct {
	Name   string         `json:"name"`
	Fields map[string]any `json:"fields"`
}

// newTelemetry returns nil when telemetry is off.
func (a *app) newTelemetry(c *apiclient.Client) *telemetry {
	switch strings.ToLower(strings.TrimSpace(a.getenv("TEAMMEM_TELEMETRY"))) {
	case "1", "true", "yes", "on":
		return &telemetry{client: c}
	}
	return nil
}

func (t *telemetry) add(name string, fields map[string]any) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, telemetryEvent{Name: name, Fields: fields})
}

// syncEvents records the reference's pull/push events for one sync.
func (t *telemetry) syncEvents(rep *memsync.Report, pulled, pushed bool, d time.Duration, err error) {
	if t == nil || rep == nil {
		return
	}
	ms := d.Milliseconds()
	failure := func(f map[string]any) map[string]any {
		if err != nil {
			f["errorType"] = errorType(err)
			if s := apiclient.StatusOf(err); s != 0 {
				f["status"] = s
			}
		}
		return f
	}
	if pulled {
		t.add("tengu_team_mem_sync_pull", failure(map[string]any{"success": err == nil, "files_written": len(rep.Pulled),
			"not_modified": rep.NotModified, "duration_ms": ms}))
	}
	if pushed {
		t.add("tengu_team_mem_sync_push", failure(map[string]any{"success": err == nil, "files_uploaded": len(rep.Pushed),
			"conflict": len(rep.Merged) > 0, "duration_ms": ms}))
	}
	var rules []string
	files := 0
	for _, s := range rep.Skipped {
		if s.Kind == memsync.SkipSecret {
			files++
			if !slices.Contains(rules, s.RuleID) {
				rules = append(rules, s.RuleID)
			}
		}
	}
	if files > 0 {
		t.add("tengu_team_mem_secret_skipped", map[string]any{"file_count": files, "rule_ids": strings.Join(rules, ",")})
	}
}

// errorType is the reference's errorType of a failed sync (auth, conflict,
// network, timeout or unknown).
func errorType(err error) string {
	var ue *apiclient.UnreachableError
	f := apiclient.FailureOf(err)
	switch {
	case f.KeyRefused():
		return "auth"
	case f.Code == teammem.EConflict || f.Code == teammem.EPreconditionFailed:
		return "conflict"
	case errors.As(err, &ue) && ue.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case f.Code == apiclient.CodeUnreachable:
		return "network"
	default:
		return "unknown"
	}
}

// flush sends the collected events; failures are dropped silently (telemetry
// must never break a sync).
func (t *telemetry) flush(ctx context.Context) {
	if t == nil {
		return
	}
	t.mu.Lock()
	events := t.events
	t.events = nil
	t.mu.Unlock()
	for len(events) > 0 {
		n := min(len(events), 100)
		body, _ := json.Marshal(map[string]any{"events": events[:n]})
		events = events[n:]
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_ = t.client.SendTelemetry(ctx, body) // once, never redirected with the key
		cancel()
	}
}
