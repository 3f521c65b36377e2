package telemetry

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randomEvent returns a valid event of schema name with random fields: each
// optional one absent or not, each value drawn from what its kind allows.
func randomEvent(rng *rand.Rand, name string, schema eventSchema) []byte {
	fields := map[string]any{}
	for fname, f := range schema.fields {
		if !f.required && rng.IntN(2) == 0 {
			continue
		}
		switch f.kind {
		case kindBool:
			fields[fname] = rng.IntN(2) == 0
		case kindNumber, kindCount:
			fields[fname] = rng.IntN(3)
		case kindStatus:
			fields[fname] = 100 + rng.IntN(500)
		case kindEnum:
			fields[fname] = f.values[rng.IntN(len(f.values))]
		case kindReason:
			fields[fname] = append(slices.Clone(f.values), "brand_new")[rng.IntN(len(f.values)+1)]
		case kindRuleIDs:
			fields[fname] = "github-pat"
		}
	}
	b, _ := json.Marshal(map[string]any{"name": name, "fields": fields})
	return b
}

// TestInitOrgCoversEveryOutcome records thousands of random valid events of
// every kind after InitOrg: none creates a series InitOrg did not, so the
// client-event labels are the closed set InitOrg knows.
func TestInitOrgCoversEveryOutcome(t *testing.T) {
	m := New()
	m.InitOrg("acme")
	count := func() int {
		families, err := m.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range families {
			if strings.HasPrefix(f.GetName(), "teammem_client_") {
				n += len(f.GetMetric())
			}
		}
		return n
	}
	before := count()
	rng := rand.New(rand.NewPCG(8, 12))
	for name, schema := range clientEvents {
		for range 500 {
			if drop := m.Client.Record("acme", randomEvent(rng, name, schema)); drop != "" {
				t.Fatalf("%s: a valid random event was dropped (%s)", name, drop)
			}
		}
	}
	if after := count(); after != before {
		t.Errorf("events added %d client series InitOrg did not create (%d before)", after-before, before)
	}
}

// TestInitOrgStartsAtZero checks that InitOrg creates the org's series at 0
// and does so once: a second call keeps the counts.
func TestInitOrgStartsAtZero(t *testing.T) {
	m := New()
	m.InitOrg("acme")
	m.Pushes.WithLabelValues("acme", "v1", "ok").Inc()
	m.InitOrg("acme")
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	perOrg := 0
	for _, f := range families {
		for _, s := range f.GetMetric() {
			v := s.GetCounter().GetValue()
			if f.GetName() == "teammem_pushes_total" && strings.Contains(s.String(), `value:"ok"`) && strings.Contains(s.String(), `value:"v1"`) {
				if v != 1 {
					t.Errorf("the second InitOrg reset a count: %v", s)
				}
				perOrg++
				continue
			}
			if strings.HasPrefix(f.GetName(), "teammem_") && f.GetName() != "teammem_secrets_skipped_total" {
				perOrg++
				if v != 0 {
					t.Errorf("%s %v starts at %g", f.GetName(), s.GetLabel(), v)
				}
			}
		}
	}
	for _, name := range []string{"teammem_pulls_total", "teammem_pushes_total", "teammem_caps_hit_total",
		"teammem_entries_written_total", "teammem_tombstone_resurrections_refused_total", "teammem_pushes_suppressed_total",
		"teammem_client_events_total", "teammem_client_events_dropped_total", "teammem_client_push_suppressed_total",
		"teammem_client_entries_capped_total", "teammem_client_secrets_skipped_total", "teammem_client_extract_runs_total",
		"teammem_client_extract_skipped_total", "teammem_client_dream_runs_total", "teammem_client_dream_skipped_total"} {
		found := false
		for _, f := range families {
			found = found || (f.GetName() == name && len(f.GetMetric()) > 0)
		}
		if !found {
			t.Errorf("InitOrg created no series of %s", name)
		}
	}
	t.Logf("InitOrg creates %d series per org", perOrg)
}

// TestPoisonRulesStartAtZero checks that every poisoning rule the server
// names has a series per action at 0 for every org, whether the org was
// initialised before the rules were known or after.
func TestPoisonRulesStartAtZero(t *testing.T) {
	m := New()
	m.InitOrg("early")
	m.KnowPoisonRules("rule-a", "rule-b")
	m.InitOrg("late")
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range families {
		if f.GetName() != "teammem_poisoning_findings_total" {
			continue
		}
		for _, s := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range s.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if v := s.GetCounter().GetValue(); v != 0 {
				t.Errorf("%v starts at %g", labels, v)
			}
			got[labels["org"]+"/"+labels["rule"]+"/"+labels["action"]] = true
		}
	}
	for _, org := range []string{"early", "late"} {
		for _, rule := range []string{"rule-a", "rule-b"} {
			for _, action := range poisonActionLabels {
				if !got[org+"/"+rule+"/"+action] {
					t.Errorf("no series for org %s, rule %s, action %s", org, rule, action)
				}
			}
		}
	}
	if len(got) != 2*2*len(poisonActionLabels) {
		t.Errorf("%d poisoning series, want %d", len(got), 2*2*len(poisonActionLabels))
	}
}
