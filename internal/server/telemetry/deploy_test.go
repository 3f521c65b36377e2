package telemetry_test

import (
	"encoding/json"
	"net"
	"os"
	"regexp"
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

// TestDashboardImportable checks the dashboard's __inputs: Grafana's import
// asks for a Prometheus data source there and puts it where the panels say
// ${DS_PROMETHEUS}; without the section an imported dashboard has none.
func TestDashboardImportable(t *testing.T) {
	var d struct {
		Inputs []struct {
			Name, Type string
			PluginID   string `json:"pluginId"`
		} `json:"__inputs"`
		Requires []struct{ Type, ID string } `json:"__requires"`
	}
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, in := range d.Inputs {
		found = found || (in.Name == dsVariable && in.Type == "datasource" && in.PluginID == "prometheus")
	}
	if !found {
		t.Errorf("__inputs %+v: want a datasource input %s of plugin prometheus", d.Inputs, dsVariable)
	}
	for _, v := range regexp.MustCompile(`\$\{(DS_[A-Z_]+)\}`).FindAllStringSubmatch(string(b), -1) {
		if v[1] != dsVariable {
			t.Errorf("the dashboard uses ${%s}, which no input provides", v[1])
		}
	}
	needs := map[string]bool{"grafana": false, "prometheus": false}
	for _, r := range d.Requires {
		if _, ok := needs[r.ID]; ok {
			needs[r.ID] = true
		}
	}
	for id, ok := range needs {
		if !ok {
			t.Errorf("__requires lacks %s", id)
		}
	}
}

// durationSelectorRE finds the selectors of the latency histogram.
// Label values may hold braces ({owner}), so a quoted string is read whole.
var durationSelectorRE = regexp.MustCompile(`teammem_http_request_duration_seconds_bucket(\{(?:[^}"]|"(?:[^"\\]|\\.)*")*\})?`)

// TestLatencyPanelsLeaveOutStreams checks every latency quantile: an event
// stream is observed when it ends, minutes after it began, and would make
// the p99 of a quiet server minutes long. Only the stream route is left
// out (POST /v1/telemetry/events ends in /events too, and is no stream).
func TestLatencyPanelsLeaveOutStreams(t *testing.T) {
	const streams = `route!="/v1/repos/{owner}/{name}/events"`
	n := 0
	for _, p := range queryPanels(loadDashboard(t)) {
		for _, tg := range p.Targets {
			for _, sel := range durationSelectorRE.FindAllStringSubmatch(tg.Expr, -1) {
				n++
				if !strings.Contains(sel[1], streams) {
					t.Errorf("panel %q: %s keeps event streams (want %s)", p.Title, sel[0], streams)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no panel queries the latency histogram")
	}
}
