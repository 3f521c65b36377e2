package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/teammem/teammem/internal/teammem"
)

// poolCollector exports a store's connection pool at scrape time.
type poolCollector struct {
	stats                                   func() teammem.PoolStats
	conns, max, waitCount, waitSec, queries *prometheus.Desc
}

// RegisterPool exports the pool of a store that can report one:
// teammem_db_connections{state="in_use"|"idle"}, teammem_db_max_connections,
// teammem_db_wait_count_total, teammem_db_wait_seconds_total and
// teammem_db_queries_total.
func (m *Metrics) RegisterPool(s teammem.PoolStatser) {
	m.Registry.MustRegister(&poolCollector{
		stats:     s.PoolStats,
		conns:     prometheus.NewDesc("teammem_db_connections", "Database connections by state (in_use, idle).", []string{"state"}, nil),
		max:       prometheus.NewDesc("teammem_db_max_connections", "Most connections the pool opens.", nil, nil),
		waitCount: prometheus.NewDesc("teammem_db_wait_count_total", "Connection acquisitions that had to wait.", nil, nil),
		waitSec:   prometheus.NewDesc("teammem_db_wait_seconds_total", "Time spent waiting for a connection.", nil, nil),
		queries: prometheus.NewDesc("teammem_db_queries_total",
			"Statements sent to the database (SQLite: those of its statement cache, which every read takes, and each transaction begun; Postgres: every one, the job queue's included).", nil, nil),
	})
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.conns
	ch <- c.max
	ch <- c.waitCount
	ch <- c.waitSec
	ch <- c.queries
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.InUse), "in_use")
	ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(s.Idle), "idle")
	ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(s.Max))
	ch <- prometheus.MustNewConstMetric(c.waitCount, prometheus.CounterValue, float64(s.WaitCount))
	ch <- prometheus.MustNewConstMetric(c.waitSec, prometheus.CounterValue, s.WaitDuration.Seconds())
	ch <- prometheus.MustNewConstMetric(c.queries, prometheus.CounterValue, float64(s.Queries))
}
