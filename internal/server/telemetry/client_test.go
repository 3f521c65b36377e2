package telemetry_test

import (
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/teammem/teammem/internal/client/jobs/sessionmem"
	"github.com/teammem/teammem/internal/server/telemetry"
)

// TestSessionMemoryEvents: the allowlist knows every skip reason the
// client's session notes report, and counts runs and skips by outcome.
func TestSessionMemoryEvents(t *testing.T) {
	if !slices.Equal(telemetry.SessionMemorySkips, sessionmem.SkipReasons) {
		t.Fatalf("allowlist %v, client reasons %v", telemetry.SessionMemorySkips, sessionmem.SkipReasons)
	}
	cm := telemetry.NewClientMetrics()
	reg := prometheus.NewRegistry()
	if err := cm.Register(reg); err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{
		`{"name":"teammem_session_memory_run","fields":{"outcome":"updated","edits":3}}`,
		`{"name":"teammem_session_memory_run","fields":{"outcome":"skipped","edits":0,"skip_reason":"tool_threshold"}}`,
		`{"name":"teammem_session_memory_skipped","fields":{"reason":"tool_threshold"}}`,
		`{"name":"teammem_session_memory_skipped","fields":{"reason":"brand_new"}}`,
	} {
		if drop := cm.Record("acme", []byte(ev)); drop != "" {
			t.Fatalf("%s dropped: %s", ev, drop)
		}
	}
	for _, c := range []struct {
		event, outcome string
		want           float64
	}{
		{"teammem_session_memory_run", "updated", 1},
		{"teammem_session_memory_run", "skipped", 1},
		{"teammem_session_memory_skipped", "tool_threshold", 1},
		{"teammem_session_memory_skipped", "other", 1},
	} {
		if got := eventCount(t, reg, c.event, c.outcome); got != c.want {
			t.Errorf("%s/%s = %v, want %v", c.event, c.outcome, got, c.want)
		}
	}
	if drop := cm.Record("acme", []byte(`{"name":"teammem_session_memory_run","fields":{"outcome":"updated","notes":"secret text"}}`)); drop != telemetry.DropInvalid {
		t.Fatalf("a free-form field was accepted: %q", drop)
	}
}

// eventCount reads teammem_client_events_total for org acme.
func eventCount(t *testing.T, reg *prometheus.Registry, event, outcome string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "teammem_client_events_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["org"] == "acme" && labels["event"] == event && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// TestPushErrorCodes: a push event takes exactly the error_codes a Claude
// Code push can be refused with, as the server's error body spells them,
// and one over the entry cap is counted as too_many_entries.
func TestPushErrorCodes(t *testing.T) {
	cm := telemetry.NewClientMetrics()
	reg := prometheus.NewRegistry()
	if err := cm.Register(reg); err != nil {
		t.Fatal(err)
	}
	for code, want := range map[string]string{
		"team_memory_too_many_entries":   "",
		"team_memory_entry_too_large":    "",
		"request_too_large":              "",
		"team_memory_secret_detected":    "",
		"team_memory_poisoning_detected": telemetry.DropInvalid,
		"too_many_entries":               telemetry.DropInvalid,
	} {
		ev := `{"name":"tengu_team_mem_sync_push","fields":{"success":false,"status":413,"error_code":"` + code + `"}}`
		if drop := cm.Record("acme", []byte(ev)); drop != want {
			t.Errorf("error_code %s: dropped %q, want %q", code, drop, want)
		}
	}
	if got := eventCount(t, reg, "tengu_team_mem_sync_push", "too_many_entries"); got != 1 {
		t.Errorf("too_many_entries = %v, want 1", got)
	}
	if got := eventCount(t, reg, "tengu_team_mem_sync_push", "failure"); got != 3 {
		t.Errorf("failure = %v, want 3", got)
	}
}
