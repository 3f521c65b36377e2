package telemetry_test

import (
	"net"
	"strings"
	"testing"
)

// TestComposeKeepsMetricsInside checks that docker-compose.yml serves the
// metrics on the listener Prometheus scrapes and publishes only the API on
// the host, and that it passes the admin key through.
func TestComposeKeepsMetricsInside(t *testing.T) {
	var compose struct {
		Services map[string]struct {
			Ports       []string          `yaml:"ports"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	readYAML(t, composeFile, &compose)
	server := compose.Services["server"]
	host, port, err := net.SplitHostPort(server.Environment["TEAMMEM_METRICS_ADDR"])
	if err != nil || (host != "" && host != "0.0.0.0") {
		t.Fatalf("server TEAMMEM_METRICS_ADDR = %q: want 0.0.0.0:<port>, reachable from the prometheus service",
			server.Environment["TEAMMEM_METRICS_ADDR"])
	}
	if want := "server:" + port; want != serverScrapeURL {
		t.Errorf("the server's metrics listener is %s, Prometheus scrapes %s", want, serverScrapeURL)
	}
	for _, p := range server.Ports {
		if strings.HasSuffix(p, ":"+port) || p == port {
			t.Errorf("server publishes the metrics port: %q", p)
		}
	}
	if _, ok := server.Environment["TEAMMEM_METRICS_TOKEN"]; ok {
		t.Error("server sets TEAMMEM_METRICS_TOKEN: the compose scrape needs none, and the API listener should not serve /metrics")
	}
	if v, ok := server.Environment["TEAMMEM_ADMIN_KEY"]; !ok || !strings.Contains(v, "${TEAMMEM_ADMIN_KEY") {
		t.Errorf("server does not pass TEAMMEM_ADMIN_KEY from the environment: %q", v)
	}
}
