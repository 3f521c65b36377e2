package telemetry

import (
	"slices"
	"sync"
)

// The label values each per-org counter takes besides the org: the closed
// sets the server records. InitOrg creates their series at 0, so that a
// dashboard shows 0 for what has not happened yet instead of "No data",
// and so that Prometheus sees a counter's first increment as one (a series
// that appears at 1 has increased by nothing as far as increase() knows).
var (
	// apiLabels are the api label values: the Claude Code route, /v1 and
	// the two memory store dialects (Anthropic's public API, Claude Code's
	// memory service), and the server's dreams' own writes.
	apiLabels = []string{"claude_code", "v1", "memory_stores", "claude_code_memory", "dream", "mcp"}
	// pullOutcomeLabels are the outcomes of teammem_pulls_total.
	pullOutcomeLabels = []string{"ok", "not_modified", "empty", "error"}
	// pushOutcomeLabels are the outcomes of teammem_pushes_total.
	pushOutcomeLabels = []string{"ok", "noop", "conflict", "too_many_entries", "entry_too_large", "request_too_large",
		"secret_rejected", "poisoning_rejected", "held", "rate_limited", "invalid", "error"}
	// proposalOutcomeLabels are the outcomes of teammem_proposals_total.
	proposalOutcomeLabels = []string{"created", "approved", "rejected"}
	// capLabels are the cap label values of teammem_caps_hit_total.
	capLabels = []string{"max_entries", "max_entry_bytes", "max_body_bytes"}
	// suppressLabels are the reasons of teammem_pushes_suppressed_total.
	suppressLabels = []string{"noop", "rate_limited"}
	// poisonActionLabels are the actions of teammem_poisoning_findings_total.
	poisonActionLabels = []string{"flagged", "held", "rejected"}
)

// KnowPoisonRules tells the metrics the rule ids of the poisoning check
// (telemetry imports no checker: the server passes them), so that InitOrg
// creates each rule × action series of every org at 0. Orgs initialised
// before the call get them at once. Rule ids are a closed set of the code's,
// never taken from a request.
func (m *Metrics) KnowPoisonRules(ids ...string) {
	m.poisonRules.add(ids)
	m.orgs.Range(func(org, _ any) bool {
		m.initPoison(org.(string), ids)
		return true
	})
}

// poisonRules is the list of poisoning rule ids, safe for concurrent use.
type poisonRules struct {
	mu  sync.Mutex
	ids []string
}

func (p *poisonRules) add(ids []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		if !slices.Contains(p.ids, id) { // a second server on the same Metrics names them again
			p.ids = append(p.ids, id)
		}
	}
}

func (p *poisonRules) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.ids)
}

// initPoison creates the poisoning series of org for rules at 0.
func (m *Metrics) initPoison(org string, rules []string) {
	for _, r := range rules {
		for _, a := range poisonActionLabels {
			m.PoisonFindings.WithLabelValues(org, r, a)
		}
	}
}

// InitOrg creates every series of org with a known label set at 0, once per
// org; later calls for the same org cost a map lookup. Secrets skipped by
// rule are left out: the rule set is gitleaks', and a series per rule per
// org would outweigh the rest.
func (m *Metrics) InitOrg(org string) {
	if _, done := m.orgs.LoadOrStore(org, true); done {
		return
	}
	for _, api := range apiLabels {
		for _, o := range pullOutcomeLabels {
			m.Pulls.WithLabelValues(org, api, o)
		}
		for _, o := range pushOutcomeLabels {
			m.Pushes.WithLabelValues(org, api, o)
		}
	}
	for _, c := range capLabels {
		m.CapsHit.WithLabelValues(org, c)
	}
	for _, r := range suppressLabels {
		m.PushesSuppressed.WithLabelValues(org, r)
	}
	for _, o := range proposalOutcomeLabels {
		m.Proposals.WithLabelValues(org, o)
	}
	m.EntriesWritten.WithLabelValues(org)
	m.TombstonesRefused.WithLabelValues(org)
	m.initPoison(org, m.poisonRules.list())
	m.Client.initOrg(org)
	m.Dreams.initOrg(org)
}

// initOrg creates the client-event series of org with known labels at 0.
func (c *ClientMetrics) initOrg(org string) {
	for name, schema := range clientEvents {
		for _, o := range schema.outcomes {
			c.Events.WithLabelValues(org, name, o)
		}
	}
	for _, r := range []string{DropUnknown, DropInvalid} {
		c.Dropped.WithLabelValues(org, r)
	}
	for _, r := range append(suppressReasons, labelOther) {
		c.PushSuppressed.WithLabelValues(org, r)
	}
	c.EntriesCapped.WithLabelValues(org)
	c.SecretsSkipped.WithLabelValues(org)
	for _, o := range extractOutcomes {
		c.ExtractRuns.WithLabelValues(org, o)
	}
	for _, r := range append(extractSkips, labelOther) {
		c.ExtractSkipped.WithLabelValues(org, r)
	}
	for _, o := range dreamOutcomes {
		c.DreamRuns.WithLabelValues(org, o)
	}
	for _, r := range append(dreamSkips, labelOther) {
		c.DreamSkipped.WithLabelValues(org, r)
	}
}

// InitRoute creates the request series of one route template and method at
// 0: the request counter with code 200 and the latency histogram. The
// server calls it for every route it has, at start, so that the request and
// latency panels have series before the first request (Prometheus scrapes
// the metrics listener, which does not count as one).
func (m *Metrics) InitRoute(route, method string) {
	method = MethodLabel(method)
	m.HTTPRequests.WithLabelValues(route, method, "200")
	m.HTTPDuration.WithLabelValues(route, method)
}
