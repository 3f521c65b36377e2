package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/teammem/teammem/internal/teammem"
)

// The metrics name every org and route a server serves, so they are not
// for the public: by default they are on a listener of their own
// (TEAMMEM_METRICS_ADDR, loopback unless the operator says otherwise), and
// the API listener serves them only to a scraper holding the metrics token.

// MetricsHandler serves the Prometheus metrics, for the metrics listener.
func (s *Server) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(s.metrics.Registry, promhttp.HandlerOpts{})
}

// metricsOnAPI serves GET /metrics on the API listener: the metrics to a
// request whose bearer token is the metrics token, 401 to any other.
func (s *Server) metricsOnAPI() http.Handler {
	// Comparing hashes keeps the comparison constant-time in the length of
	// the token too.
	want := sha256.Sum256([]byte(s.cfg.MetricsToken))
	metrics := s.MetricsHandler()
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		token, ok := bearerToken(r)
		got := sha256.Sum256([]byte(token))
		if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			return teammem.Errorf(teammem.EUnauthorized, "/metrics needs the metrics token: Authorization: Bearer <TEAMMEM_METRICS_TOKEN>")
		}
		metrics.ServeHTTP(w, r)
		return nil
	})
}

// bearerToken returns the token of an "Authorization: Bearer" header and
// whether there is one.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
