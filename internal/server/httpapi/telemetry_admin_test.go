package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

type wireTelemetryResult struct {
	Accepted int `json:"accepted"`
	Dropped  int `json:"dropped"`
}

func TestTelemetryEvents(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	accepted := []string{
		`{"name":"tengu_team_mem_sync_started","fields":{"initial_pull_success":true,"initial_files_pulled":3,"watcher_started":true,"server_has_content":true}}`,
		`{"name":"tengu_team_mem_sync_pull","fields":{"success":true,"files_written":0,"not_modified":true,"duration_ms":12.5}}`,
		`{"name":"tengu_team_mem_sync_pull","fields":{"success":false,"errorType":"timeout","duration_ms":3000}}`,
		`{"name":"tengu_team_mem_sync_push","fields":{"success":true,"files_uploaded":0,"duration_ms":4}}`,
		`{"name":"tengu_team_mem_sync_push","fields":{"success":true,"files_uploaded":2,"conflict":false,"conflict_retries":0,"put_batches":2}}`,
		`{"name":"tengu_team_mem_sync_push","fields":{"success":false,"status":413,"error_code":"team_memory_too_many_entries","server_max_entries":500,"server_received_entries":512}}`,
		`{"name":"tengu_team_mem_sync_push","fields":{"success":false,"conflict":true,"conflict_retries":2,"errorType":"conflict"}}`,
		`{"name":"tengu_team_mem_push_suppressed","fields":{"reason":"http_413","status":413}}`,
		`{"name":"tengu_team_mem_push_suppressed","fields":{"reason":"http_418"}}`,
		`{"name":"tengu_team_mem_secret_skipped","fields":{"file_count":2,"rule_ids":"github-pat,aws-access-token"}}`,
		`{"name":"tengu_team_mem_entries_capped","fields":{"total_entries":600,"dropped_count":100,"max_entries":500}}`,
		`{"name":"teammem_extract_run","fields":{"outcome":"saved","memories_saved":2}}`,
		`{"name":"teammem_extract_run","fields":{"outcome":"skipped","skip_reason":"no_prose","memories_saved":null}}`,
		`{"name":"teammem_extract_skipped","fields":{"reason":"throttled"}}`,
		`{"name":"teammem_dream_run","fields":{"outcome":"dry_run","files_touched":4}}`,
		`{"name":"teammem_dream_skipped","fields":{"reason":"sessions"}}`,
		`{"name":"teammem_dream_skipped","fields":{"reason":"new_gate"}}`,
	}
	dropped := []string{
		`{"name":"tengu_team_mem_accessed","fields":{"tool":"Read"}}`,                        // unknown
		`{"name":"tengu_something_else"}`,                                                    // unknown
		`{"name":"tengu_team_mem_sync_push","fields":{"success":true,"path":"team/a.md"}}`,   // field not allowed
		`{"name":"tengu_team_mem_sync_push","fields":{"files_uploaded":1}}`,                  // success missing
		`{"name":"tengu_team_mem_sync_push","fields":{"success":"yes"}}`,                     // wrong type
		`{"name":"tengu_team_mem_sync_push","fields":{"success":true,"files_uploaded":1.5}}`, // not an integer
		`{"name":"tengu_team_mem_sync_push","fields":{"success":true,"files_uploaded":-1}}`,  // negative
		`{"name":"tengu_team_mem_sync_pull","fields":{"success":false,"errorType":"disk on fire at /home/x"}}`,
		`{"name":"tengu_team_mem_sync_pull","fields":{"success":false,"status":42}}`,
		`{"name":"tengu_team_mem_secret_skipped","fields":{"file_count":1,"rule_ids":"AKIA1234 in notes.md"}}`,
		`{"name":"tengu_team_mem_push_suppressed","fields":{"reason":"Failed: /home/me/secret"}}`,
		`{"name":"teammem_dream_run","fields":{"outcome":"exploded"}}`,
		`{"name":"teammem_dream_run","fields":{"outcome":"completed"},"time":"now"}`, // unknown event key
		`{"fields":{}}`,
		`"tengu_team_mem_sync_push"`,
		`null`,
	}
	batch := `{"events":[` + strings.Join(append(append([]string{}, accepted...), dropped...), ",") + `]}`
	got := adminJSON[wireTelemetryResult](t, b.req(t, http.MethodPost, "/v1/telemetry/events", b.keys["viewer"], batch, http.StatusAccepted))
	if got != (wireTelemetryResult{Accepted: len(accepted), Dropped: len(dropped)}) {
		t.Errorf("result = %+v, want %d accepted and %d dropped", got, len(accepted), len(dropped))
	}

	metrics := b.metricsText(t)
	for _, want := range []string{
		`teammem_client_events_total{event="tengu_team_mem_sync_started",org="acme",outcome="success"} 1`,
		`teammem_client_events_total{event="tengu_team_mem_sync_pull",org="acme",outcome="not_modified"} 1`,
		`teammem_client_events_total{event="tengu_team_mem_sync_pull",org="acme",outcome="timeout"} 1`,
		`teammem_client_events_total{event="tengu_team_mem_sync_push",org="acme",outcome="noop"} 1`,
		`teammem_client_events_total{event="tengu_team_mem_sync_push",org="acme",outcome="success"} 1`,
		`teammem_client_events_total{event="tengu_team_mem_sync_push",org="acme",outcome="too_many_entries"} 1`,
		`teammem_client_events_total{event="tengu_team_mem_sync_push",org="acme",outcome="conflict"} 1`,
		`teammem_client_push_suppressed_total{org="acme",reason="http_413"} 1`,
		`teammem_client_push_suppressed_total{org="acme",reason="other"} 1`,
		`teammem_client_secrets_skipped_total{org="acme"} 2`,
		`teammem_client_entries_capped_total{org="acme"} 1`,
		`teammem_client_extract_runs_total{org="acme",outcome="saved"} 1`,
		`teammem_client_extract_runs_total{org="acme",outcome="skipped"} 1`,
		`teammem_client_extract_skipped_total{org="acme",reason="throttled"} 1`,
		`teammem_client_dream_runs_total{org="acme",outcome="dry_run"} 1`,
		`teammem_client_dream_skipped_total{org="acme",reason="sessions"} 1`,
		`teammem_client_dream_skipped_total{org="acme",reason="other"} 1`,
		`teammem_client_events_dropped_total{org="acme",reason="unknown"} 2`,
		fmt.Sprintf(`teammem_client_events_dropped_total{org="acme",reason="invalid"} %d`, len(dropped)-2),
	} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, leak := range []string{"team/a.md", "/home/", "AKIA", "tengu_something_else", "tengu_team_mem_accessed", "new_gate", "http_418"} {
		if strings.Contains(metrics, leak) {
			t.Errorf("metrics carry %q", leak)
		}
	}
}

func TestTelemetryRefusals(t *testing.T) {
	t.Parallel()
	b := setupAdmin(t)
	event := `{"name":"teammem_dream_skipped","fields":{"reason":"time"}}`
	repeat := func(n int) string {
		return `{"events":[` + strings.TrimSuffix(strings.Repeat(event+",", n), ",") + `]}`
	}

	// A read-only key may report; an empty batch is fine.
	b.req(t, http.MethodPost, "/v1/telemetry/events", b.keys["admin-ro"], repeat(100), http.StatusAccepted)
	b.req(t, http.MethodPost, "/v1/telemetry/events", b.keys["member"], `{"events":[]}`, http.StatusAccepted)

	for _, c := range []struct {
		name, key, body string
		want            int
	}{
		{"no key", "", repeat(1), http.StatusUnauthorized},
		{"too many events", b.keys["member"], repeat(101), http.StatusBadRequest},
		{"no events", b.keys["member"], `{}`, http.StatusBadRequest},
		{"events not a list", b.keys["member"], `{"events":{}}`, http.StatusBadRequest},
		{"unknown field", b.keys["member"], `{"events":[],"client":"x"}`, http.StatusBadRequest},
		{"over 64 KB", b.keys["member"], `{"events":[],"pad":"` + strings.Repeat("x", 64<<10) + `"}`, http.StatusRequestEntityTooLarge},
	} {
		body := b.req(t, http.MethodPost, "/v1/telemetry/events", c.key, c.body, c.want)
		if c.want == http.StatusRequestEntityTooLarge && !strings.Contains(string(body), `"request_too_large"`) {
			t.Errorf("%s: %s", c.name, body)
		}
	}
	if m := b.metricsText(t); !strings.Contains(m, `teammem_client_dream_skipped_total{org="acme",reason="time"} 100`+"\n") {
		t.Errorf("refused batches were counted: %s", grepLines(m, "teammem_client_"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}
