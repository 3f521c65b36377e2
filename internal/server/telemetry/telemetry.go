// Package telemetry owns the server's Prometheus registry and the metric
// definitions of design §8. Metrics are created per server (not registered
// globally), so several servers can run in one test process. Labels are
// bounded: org slug, route template, method, status code, outcome, reason,
// rule id, cap name — each from a closed set, so that no request, however
// odd, adds a series.
package telemetry

import (
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// RouteUnmatched is the route label of a request no route template matched.
const RouteUnmatched = "unmatched"

// MethodOther is the method label of a request whose method is not one of
// the standard ones.
const MethodOther = "other"

// MethodLabel returns method as a label value: the methods of RFC 9110 and
// PATCH as they are, anything else as MethodOther. HTTP allows any token as
// a method, and a label taken from the request as sent would let every
// unauthenticated request with a new one add series that live for good.
func MethodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return MethodOther
}

// Metrics are the server's metrics.
type Metrics struct {
	Registry *prometheus.Registry

	// HTTPRequests counts requests by route template, method and status code.
	HTTPRequests *prometheus.CounterVec
	// HTTPDuration observes request latency by route template and method.
	HTTPDuration *prometheus.HistogramVec
	// Pulls counts pulls by org, API (claude_code, v1) and outcome
	// (ok, not_modified, empty, error).
	Pulls *prometheus.CounterVec
	// Pushes counts pushes by org, API and outcome (ok, noop, conflict,
	// too_many_entries, entry_too_large, request_too_large,
	// secret_rejected, poisoning_rejected, held, rate_limited, invalid,
	// error).
	Pushes *prometheus.CounterVec
	// EntriesWritten counts entries written (upserts, deletes, restores) by org.
	EntriesWritten *prometheus.CounterVec
	// SecretsSkipped counts entries left out for secrets, by org and rule id.
	SecretsSkipped *prometheus.CounterVec
	// PoisonFindings counts poisoning-check findings on team writes, by
	// org, rule id and what the policy did (flagged, held, rejected).
	PoisonFindings *prometheus.CounterVec
	// Proposals counts held team writes by org and outcome (created,
	// approved, rejected).
	Proposals *prometheus.CounterVec
	// CapsHit counts writes refused by a cap, by org and cap
	// (max_entries, max_entry_bytes, max_body_bytes).
	CapsHit *prometheus.CounterVec
	// TombstonesRefused counts stale re-uploads of deleted content refused.
	TombstonesRefused *prometheus.CounterVec
	// PushesSuppressed counts pushes the server suppressed, by org and reason
	// (noop, rate_limited).
	PushesSuppressed *prometheus.CounterVec
	// Client counts the events clients report, on the same registry.
	Client *ClientMetrics
	// Dreams are the dream metrics (dreams.go).
	Dreams *DreamMetrics

	orgs *sync.Map // the orgs InitOrg has seen
	// poisonRules holds the rule ids KnowPoisonRules was given.
	poisonRules *poisonRules
}

// New creates the metrics, the client-event counters among them, on a fresh
// registry that also carries the Go and process collectors.
func New() *Metrics {
	r := prometheus.NewRegistry()
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := &Metrics{
		Registry:    r,
		orgs:        &sync.Map{},
		poisonRules: &poisonRules{},
		HTTPRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_http_requests_total", Help: "HTTP requests by route template, method and status code.",
		}, []string{"route", "method", "code"}),
		HTTPDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "teammem_http_request_duration_seconds", Help: "HTTP request latency by route template and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method"}),
		Pulls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_pulls_total", Help: "Pulls by org, API and outcome (ok, not_modified, empty, error).",
		}, []string{"org", "api", "outcome"}),
		Pushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_pushes_total", Help: "Pushes by org, API and outcome.",
		}, []string{"org", "api", "outcome"}),
		EntriesWritten: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_entries_written_total", Help: "Entries written, deleted or restored, by org.",
		}, []string{"org"}),
		SecretsSkipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_secrets_skipped_total", Help: "Entries left out because a secret was found, by org and rule id.",
		}, []string{"org", "rule"}),
		PoisonFindings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_poisoning_findings_total", Help: "Poisoning-check findings on team writes, by org, rule id and action (flagged, held, rejected).",
		}, []string{"org", "rule", "action"}),
		Proposals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_proposals_total", Help: "Team writes held for review, by org and outcome (created, approved, rejected).",
		}, []string{"org", "outcome"}),
		CapsHit: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_caps_hit_total", Help: "Writes refused by a cap, by org and cap.",
		}, []string{"org", "cap"}),
		TombstonesRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_tombstone_resurrections_refused_total", Help: "Stale re-uploads of deleted content that were not resurrected, by org.",
		}, []string{"org"}),
		PushesSuppressed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_pushes_suppressed_total", Help: "Pushes suppressed by the server, by org and reason.",
		}, []string{"org", "reason"}),
	}
	r.MustRegister(m.HTTPRequests, m.HTTPDuration, m.Pulls, m.Pushes, m.EntriesWritten, m.SecretsSkipped,
		m.CapsHit, m.TombstonesRefused, m.PushesSuppressed, m.PoisonFindings, m.Proposals)
	m.Dreams = newDreamMetrics(r)
	m.Client = NewClientMetrics()
	if err := m.Client.Register(r); err != nil {
		panic("register client metrics: " + err.Error()) // a name clash on a fresh registry: a programming error
	}
	return m
}
