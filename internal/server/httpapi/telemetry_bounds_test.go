package httpapi_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTelemetryCountsBounded sends the batches that once added 10^11 to a
// counter in one viewer request: an event's own count is range-checked,
// and a batch as a whole adds no more than a plausible number of files.
func TestTelemetryCountsBounded(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	event := func(files int) string {
		return fmt.Sprintf(`{"name":"tengu_team_mem_secret_skipped","fields":{"file_count":%d,"rule_ids":"github-pat"}}`, files)
	}
	batch := func(n, files int) string {
		return `{"events":[` + strings.TrimSuffix(strings.Repeat(event(files)+",", n), ",") + `]}`
	}
	skipped := func() float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^teammem_client_secrets_skipped_total\{org="acme"\} (\S+)$`).FindStringSubmatch(b.metricsText(t))
		if m == nil {
			return 0
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	for _, c := range []struct {
		name              string
		body              string
		accepted, dropped int
		wantSum           float64 // the counter after the batch
	}{
		{"one huge count", batch(1, 1_000_000_000), 0, 1, 0},
		{"100 huge counts", batch(100, 1_000_000_000), 0, 100, 0},
		{"100 counts of 100", batch(100, 100), 50, 50, 5000},
		{"a plausible batch", batch(3, 7), 3, 0, 5021},
	} {
		got := adminJSON[wireTelemetryResult](t, b.req(t, http.MethodPost, "/v1/telemetry/events", b.keys["viewer"], c.body, http.StatusAccepted))
		if got.Accepted != c.accepted || got.Dropped != c.dropped {
			t.Errorf("%s: %+v, want %d accepted and %d dropped", c.name, got, c.accepted, c.dropped)
		}
		if sum := skipped(); sum != c.wantSum {
			t.Errorf("%s: teammem_client_secrets_skipped_total = %g, want %g", c.name, sum, c.wantSum)
		}
	}
}
