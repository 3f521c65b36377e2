package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

// Client telemetry ingestion (design §8): batches of client events become
// per-org counters. The event allowlist and the counters live in
// internal/server/telemetry (client.go); this file is the HTTP side.

// Batch limits of POST /v1/telemetry/events.
const (
	maxTelemetryEvents = 100
	maxTelemetryBody   = 64 << 10
)

// telemetryRequest is the body of POST /v1/telemetry/events. Events stay raw
// so that one bad event is dropped on its own instead of failing the batch.
type telemetryRequest struct {
	Events []json.RawMessage `json:"events"`
}

// telemetryResponse is the 202 body: how many events were counted and how
// many were dropped (unknown names, fields off the allowlist).
type telemetryResponse struct {
	Accepted int `json:"accepted"`
	Dropped  int `json:"dropped"`
}

// clientMetrics returns the client-event counters, which telemetry.New
// registers with the server's own.
func (s *Server) clientMetrics() *telemetry.ClientMetrics { return s.metrics.Client }

// postTelemetry returns the handler of POST /v1/telemetry/events.
func (s *Server) postTelemetry(cm *telemetry.ClientMetrics) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p := principal(r)
		if err := teammem.Authorize(p, teammem.ActTelemetry, false); err != nil {
			return err
		}
		if r.ContentLength > maxTelemetryBody {
			return &http.MaxBytesError{Limit: maxTelemetryBody}
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxTelemetryBody)
		var body telemetryRequest
		if err := decodeStrictJSON(r, &body); err != nil {
			return err
		}
		if body.Events == nil {
			return teammem.Errorf(teammem.EInvalid, `request body must be {"events": [{"name": "...", "fields": {...}}, ...]}`)
		}
		if len(body.Events) > maxTelemetryEvents {
			return teammem.Errorf(teammem.EInvalid, "a batch holds at most %d events, not %d", maxTelemetryEvents, len(body.Events)).
				WithDetails(map[string]any{"max_events": maxTelemetryEvents})
		}
		var resp telemetryResponse
		batch := cm.NewBatch(p.Org.Slug)
		for _, raw := range body.Events {
			if batch.Record(raw) == "" {
				resp.Accepted++
			} else {
				resp.Dropped++
			}
		}
		writeJSON(w, http.StatusAccepted, resp)
		return nil
	}
}
