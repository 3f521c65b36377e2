package main_test

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// metricsAddrRE finds the metrics listener's address in the "listening" line.
var metricsAddrRE = regexp.MustCompile(`"metrics_addr":"(127\.0\.0\.1:\d+)"`)

// metricsURL returns the URL of s's metrics listener, from its log.
func metricsURL(t *testing.T, s *server) string {
	t.Helper()
	m := metricsAddrRE.FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("the server logged no metrics_addr:\n%s", s.logs.String())
	}
	return "http://" + m[1]
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestMetricsListener runs the server as configured by default but for the
// port: the metrics are on their own listener, and the API listener,
// without a metrics token, does not serve them.
func TestMetricsListener(t *testing.T) {
	t.Parallel()
	s := startServer(t, "sqlite://"+filepath.Join(t.TempDir(), "teammem.db"),
		"TEAMMEM_METRICS_ADDR=127.0.0.1:0", "TEAMMEM_METRICS_TOKEN=")
	if code, body := httpGet(t, s.URL+"/metrics"); code != http.StatusNotFound {
		t.Errorf("API listener GET /metrics = %d, want 404: %.200s", code, body)
	}
	code, body := httpGet(t, metricsURL(t, s)+"/metrics")
	if code != http.StatusOK || !strings.Contains(body, `teammem_http_requests_total{code="404",method="GET",route="unmatched"} 1`) {
		t.Errorf("metrics listener = %d:\n%.2000s", code, body)
	}
}

// TestMetricsListenerTaken starts the server on a metrics address something
// else holds: it refuses to start and names the setting.
func TestMetricsListenerTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(serverBin)
	cmd.Env = append(os.Environ(), "TEAMMEM_ADDR=127.0.0.1:0", "TEAMMEM_METRICS_ADDR="+ln.Addr().String(),
		"TEAMMEM_DATABASE_URL=sqlite://"+filepath.Join(t.TempDir(), "teammem.db"), "TEAMMEM_BOOTSTRAP_KEY="+bootstrapKey)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "TEAMMEM_METRICS_ADDR="+ln.Addr().String()) {
		t.Fatalf("server on a taken metrics address: %v\n%s", err, out)
	}
}
