package telemetry

import "github.com/prometheus/client_golang/prometheus"

// DreamMetrics are the metrics of dreams (issue 24). The API records the
// creations; the dream worker adds its own (status, duration, tokens).
type DreamMetrics struct {
	// Created counts dreams created, by org.
	Created *prometheus.CounterVec
}

// newDreamMetrics creates the dream metrics on r.
func newDreamMetrics(r *prometheus.Registry) *DreamMetrics {
	d := &DreamMetrics{
		Created: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "teammem_dreams_created_total", Help: "Dreams created, by org.",
		}, []string{"org"}),
	}
	r.MustRegister(d.Created)
	return d
}

// initOrg makes an org's dream series exist at zero.
func (d *DreamMetrics) initOrg(org string) { d.Created.WithLabelValues(org) }
