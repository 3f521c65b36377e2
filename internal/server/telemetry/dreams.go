package telemetry

import "github.com/prometheus/client_golang/prometheus"

// DreamMetrics are the metrics of dreams (issue 24). The API records the
// creations; the dream worker (internal/server/dreamworker) the rest.
type DreamMetrics struct {
	// Created counts dreams created, by org.
	Created *prometheus.CounterVec
	// Finished counts dreams a worker ended, by final status (completed,
	// failed, canceled) and error type ("" unless failed).
	Finished *prometheus.CounterVec
	// Duration observes how long a worker ran a dream, by final status.
	Duration *prometheus.HistogramVec
	// Tokens counts the model tokens dreams used, by kind (input, output,
	// cache_creation, cache_read).
	Tokens *prometheus.CounterVec
	// Running is how many dreams this replica runs now.
	Running prometheus.Gauge
}

// DreamTokenKinds are the values of Tokens' kind label.
var DreamTokenKinds = []string{"input", "output", "cache_creation", "cache_read"}

// dreamEnds are the (status, error_type) pairs a dream ends with
// (internal/server/dreamworker documents the error types): their series
// start at 0, so the dashboard shows 0 before the first dream ends.
var dreamEnds = [][2]string{{"completed", ""}, {"canceled", ""}, {"failed", "timeout"},
	{"failed", "token_budget_exceeded"}, {"failed", "model_error"}, {"failed", "internal_error"}}

// newDreamMetrics creates the dream metrics on r.
func newDreamMetrics(r *prometheus.Registry) *DreamMetrics {
	d := &DreamMetrics{
		Created: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_dreams_created_total", Help: "Dreams created, by org.",
		}, []string{"org"}),
		Finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_dreams_finished_total", Help: "Dreams a worker ended, by final status and error type.",
		}, []string{"status", "error_type"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "teammem_dream_duration_seconds", Help: "How long a worker ran a dream, by final status.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600},
		}, []string{"status"}),
		Tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_dream_tokens_total", Help: "Model tokens dreams used, by kind.",
		}, []string{"kind"}),
		Running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "teammem_dreams_running", Help: "Dreams this replica runs now.",
		}),
	}
	r.MustRegister(d.Created, d.Finished, d.Duration, d.Tokens, d.Running)
	for _, k := range DreamTokenKinds {
		d.Tokens.WithLabelValues(k)
	}
	for _, e := range dreamEnds {
		d.Finished.WithLabelValues(e[0], e[1])
		d.Duration.WithLabelValues(e[0])
	}
	return d
}

// initOrg makes an org's dream series exist at zero.
func (d *DreamMetrics) initOrg(org string) { d.Created.WithLabelValues(org) }
