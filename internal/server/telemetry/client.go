package telemetry

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/wire"
)

// Client telemetry (design §8): clients send events named as in the
// reference's §3.16 (tengu_team_mem_*) plus teammem's own extract and dream
// events. Each event's fields are checked against the allowlist below, so
// nothing free-form (content, paths, messages) can arrive: booleans,
// non-negative numbers, HTTP statuses, closed enums, short reason ids and
// comma lists of rule ids. Accepted events become per-org counters whose
// labels come from closed sets; an unlisted reason is counted as "other".

// Drop reasons: what Record returns for a refused event, and the reason
// label of teammem_client_events_dropped_total.
const (
	DropUnknown = "unknown" // the event name is not on the allowlist
	DropInvalid = "invalid" // a field is missing, unlisted or of the wrong type or value
)

// labelOther stands for a reason outside the known set, keeping labels bounded.
const labelOther = "other"

// ClientMetrics count client telemetry events per org. They live on the
// server's registry, next to Metrics, but are a separate type so that the
// client-event schema and the counters it feeds stay in one file.
type ClientMetrics struct {
	// Events counts accepted events by org, event name and derived outcome
	// (success, noop, not_modified, conflict, too_many_entries, an errorType,
	// failure, suppressed, skipped, capped, or the event's own outcome).
	Events *prometheus.CounterVec
	// Dropped counts events refused by org and reason (unknown, invalid).
	Dropped *prometheus.CounterVec
	// PushSuppressed counts clients that stopped pushing, by org and reason.
	PushSuppressed *prometheus.CounterVec
	// EntriesCapped counts pushes a client capped at the server's max_entries.
	EntriesCapped *prometheus.CounterVec
	// SecretsSkipped counts files a client left out of a push for secrets.
	SecretsSkipped *prometheus.CounterVec
	// ExtractRuns counts memory extraction runs by org and outcome.
	ExtractRuns *prometheus.CounterVec
	// ExtractSkipped counts skipped extractions by org and reason.
	ExtractSkipped *prometheus.CounterVec
	// DreamRuns counts consolidation runs by org and outcome.
	DreamRuns *prometheus.CounterVec
	// DreamSkipped counts consolidations a gate stopped, by org and reason.
	DreamSkipped *prometheus.CounterVec
}

// NewClientMetrics creates the client-event counters, unregistered.
func NewClientMetrics() *ClientMetrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	return &ClientMetrics{
		Events:         counter("teammem_client_events_total", "Client telemetry events accepted, by org, event and outcome.", "org", "event", "outcome"),
		Dropped:        counter("teammem_client_events_dropped_total", "Client telemetry events dropped, by org and reason (unknown, invalid).", "org", "reason"),
		PushSuppressed: counter("teammem_client_push_suppressed_total", "Clients that suppressed pushes after a permanent failure, by org and reason.", "org", "reason"),
		EntriesCapped:  counter("teammem_client_entries_capped_total", "Client pushes capped at the server's max_entries, by org.", "org"),
		SecretsSkipped: counter("teammem_client_secrets_skipped_total", "Files clients left out of pushes because of secrets, by org.", "org"),
		ExtractRuns:    counter("teammem_client_extract_runs_total", "Client memory extraction runs, by org and outcome (saved, skipped, error).", "org", "outcome"),
		ExtractSkipped: counter("teammem_client_extract_skipped_total", "Client memory extractions skipped, by org and reason.", "org", "reason"),
		DreamRuns:      counter("teammem_client_dream_runs_total", "Client dream runs, by org and outcome (completed, failed, dry_run).", "org", "outcome"),
		DreamSkipped:   counter("teammem_client_dream_skipped_total", "Client dreams stopped by a gate, by org and reason.", "org", "reason"),
	}
}

// Register registers the counters on reg. A counter that reg already holds
// (registered by another ClientMetrics) is adopted instead, so registering
// twice on one registry is harmless and both values count into the same
// series.
func (c *ClientMetrics) Register(reg prometheus.Registerer) error {
	for _, v := range []**prometheus.CounterVec{&c.Events, &c.Dropped, &c.PushSuppressed, &c.EntriesCapped,
		&c.SecretsSkipped, &c.ExtractRuns, &c.ExtractSkipped, &c.DreamRuns, &c.DreamSkipped} {
		err := reg.Register(*v)
		var are prometheus.AlreadyRegisteredError
		switch {
		case err == nil:
		case errors.As(err, &are):
			existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return err
			}
			*v = existing
		default:
			return err
		}
	}
	return nil
}

// Record validates one raw event ({"name": "...", "fields": {...}}) and, when
// it is acceptable, counts it for org. It returns "" for an accepted event,
// else the drop reason (DropUnknown or DropInvalid), which it has counted.
// It is a batch of one event.
func (c *ClientMetrics) Record(org string, raw []byte) string { return c.NewBatch(org).Record(raw) }

// maxFilesPerBatch bounds what one request's events add to
// teammem_client_secrets_skipped_total: every other counter takes one per
// event, but tengu_team_mem_secret_skipped adds its file_count. Without a
// bound one viewer's batch of 100 events added 10^11. A push leaves out at
// most the files of one memory directory, and a server's entry caps are in
// the hundreds, so 5,000 is more than any batch of real events reaches.
const maxFilesPerBatch = 5000

// Batch counts the events of one request for one org, holding the counts
// they add to a plausible total (maxFilesPerBatch); an event past it is
// dropped as invalid, like one whose own count is past it.
type Batch struct {
	c     *ClientMetrics
	org   string
	files float64 // file_count of the events accepted so far
}

// NewBatch starts counting one request's events for org.
func (c *ClientMetrics) NewBatch(org string) *Batch { return &Batch{c: c, org: org} }

// Record validates one raw event and, when it is acceptable and within the
// batch's bound, counts it. It returns "" for an accepted event, else the
// drop reason (DropUnknown or DropInvalid), which it has counted.
func (b *Batch) Record(raw []byte) string {
	c, org := b.c, b.org
	ev, reason := parseClientEvent(raw)
	if reason == "" && b.files+ev.nums["file_count"] > maxFilesPerBatch {
		reason = DropInvalid
	}
	if reason != "" {
		c.Dropped.WithLabelValues(org, reason).Inc()
		return reason
	}
	b.files += ev.nums["file_count"]
	c.Events.WithLabelValues(org, ev.name, ev.outcome()).Inc()
	switch ev.name {
	case "tengu_team_mem_push_suppressed":
		c.PushSuppressed.WithLabelValues(org, ev.label("reason")).Inc()
	case "tengu_team_mem_secret_skipped":
		c.SecretsSkipped.WithLabelValues(org).Add(ev.nums["file_count"])
	case "tengu_team_mem_entries_capped":
		c.EntriesCapped.WithLabelValues(org).Inc()
	case "teammem_extract_run":
		c.ExtractRuns.WithLabelValues(org, ev.strs["outcome"]).Inc()
	case "teammem_extract_skipped":
		c.ExtractSkipped.WithLabelValues(org, ev.label("reason")).Inc()
	case "teammem_dream_run":
		c.DreamRuns.WithLabelValues(org, ev.strs["outcome"]).Inc()
	case "teammem_dream_skipped":
		c.DreamSkipped.WithLabelValues(org, ev.label("reason")).Inc()
	}
	return ""
}

// fieldKind is the type a client event field's value must have.
type fieldKind int

const (
	kindBool    fieldKind = iota
	kindNumber            // a non-negative number up to maxNumber (counts, durations)
	kindCount             // a non-negative integer up to maxNumber
	kindStatus            // an HTTP status code, 100-599
	kindEnum              // one of field.values exactly
	kindReason            // a short lowercase id; labels map ids outside field.values to "other"
	kindRuleIDs           // comma-joined scanner rule ids, [a-z0-9-]+ each
)

// maxNumber bounds numeric fields; no count or duration a client reports
// comes near it.
const maxNumber = 1e9

var (
	reasonRE  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	ruleIDsRE = regexp.MustCompile(`^(?:[a-z0-9-]{1,64}(?:,[a-z0-9-]{1,64})*)?$`)
)

// maxRuleIDsLength bounds a rule_ids list.
const maxRuleIDsLength = 1024

// field is one allowed field of an event.
type field struct {
	kind     fieldKind
	required bool
	values   []string // kindEnum: the allowed values; kindReason: the values kept as labels
}

// eventSchema is one allowed event: its fields, how its outcome label is
// derived from them, and every outcome that derivation can give.
type eventSchema struct {
	fields   map[string]field
	outcome  func(e clientEvent) string
	outcomes []string
}

// Closed sets of string values, from the reference (§3.16 and the sync
// errors it reports) and teammem's own client.
var (
	errorTypes = []string{"no_oauth", "no_repo", "auth", "timeout", "network", "parse", "unknown", "conflict"}
	// The error_code a push reports is the one the server's error body
	// carried, for the refusals of a Claude Code push.
	errorCodes = refusalCodes(teammem.ReasonTooManyEntries, teammem.ReasonEntryTooLarge, teammem.ReasonBodyTooLarge,
		teammem.ReasonSecretDetected)
	// The reference suppresses with "http_<status>", an errorType or "unknown";
	// the statuses kept are the permanent failures this server answers.
	suppressReasons = []string{"no_oauth", "no_repo", "unknown", "http_400", "http_401", "http_403", "http_404", "http_410", "http_413", "http_422"}
	extractSkips    = []string{"direct_write", "no_prose", "throttled", "no_model", "no_messages", "coalesced", "memory_changed"}
	dreamSkips      = []string{"disabled", "time", "throttle", "sessions", "lock"}
	extractOutcomes = []string{"saved", "skipped", "error"}
	dreamOutcomes   = []string{"completed", "failed", "dry_run"}
	// The outcomes syncOutcome derives, from the fields each event has.
	syncPullOutcomes = append([]string{"success", "not_modified", "failure"}, errorTypes...)
	syncPushOutcomes = append([]string{"success", "noop", "too_many_entries", "failure"}, errorTypes...) // errorTypes holds conflict
	// SessionMemorySkips are the skip reasons of a session-notes update
	// (the client's sessionmem.SkipReasons).
	SessionMemorySkips = []string{"disabled", "claude_code", "no_model", "no_transcript", "in_progress", "init_threshold",
		"token_threshold", "tool_threshold", "no_change"}
)

// refusalCodes lists the error_codes of reasons, as the error body sends them.
func refusalCodes(reasons ...teammem.Reason) []string {
	out := make([]string, len(reasons))
	for i, r := range reasons {
		out[i] = wire.RefusalCode(r)
	}
	return out
}

// reasonOutcome labels an event by its bounded reason field.
func reasonOutcome(e clientEvent) string { return e.label("reason") }

func constOutcome(o string) func(clientEvent) string { return func(clientEvent) string { return o } }

// clientEvents is the allowlist: every event a client may send and its fields.
var clientEvents = map[string]eventSchema{
	"tengu_team_mem_sync_started": {fields: map[string]field{
		"initial_pull_success": {kind: kindBool},
		"initial_files_pulled": {kind: kindCount},
		"watcher_started":      {kind: kindBool},
		"server_has_content":   {kind: kindBool},
	}, outcome: syncStartedOutcome, outcomes: []string{"unknown", "success", "failure"}},
	"tengu_team_mem_sync_pull": {fields: map[string]field{
		"success":       {kind: kindBool, required: true},
		"files_written": {kind: kindCount},
		"not_modified":  {kind: kindBool},
		"duration_ms":   {kind: kindNumber},
		"errorType":     {kind: kindEnum, values: errorTypes},
		"status":        {kind: kindStatus},
	}, outcome: syncOutcome, outcomes: syncPullOutcomes},
	"tengu_team_mem_sync_push": {fields: map[string]field{
		"success":                 {kind: kindBool, required: true},
		"files_uploaded":          {kind: kindCount},
		"conflict":                {kind: kindBool},
		"conflict_retries":        {kind: kindCount},
		"duration_ms":             {kind: kindNumber},
		"errorType":               {kind: kindEnum, values: errorTypes},
		"status":                  {kind: kindStatus},
		"put_batches":             {kind: kindCount},
		"error_code":              {kind: kindEnum, values: errorCodes},
		"server_max_entries":      {kind: kindCount},
		"server_received_entries": {kind: kindCount},
	}, outcome: syncOutcome, outcomes: syncPushOutcomes},
	"tengu_team_mem_push_suppressed": {fields: map[string]field{
		"reason": {kind: kindReason, required: true, values: suppressReasons},
		"status": {kind: kindStatus},
	}, outcome: constOutcome("suppressed"), outcomes: []string{"suppressed"}},
	"tengu_team_mem_secret_skipped": {fields: map[string]field{
		"file_count": {kind: kindCount, required: true},
		"rule_ids":   {kind: kindRuleIDs},
	}, outcome: constOutcome("skipped"), outcomes: []string{"skipped"}},
	"tengu_team_mem_entries_capped": {fields: map[string]field{
		"total_entries": {kind: kindCount},
		"dropped_count": {kind: kindCount},
		"max_entries":   {kind: kindCount},
	}, outcome: constOutcome("capped"), outcomes: []string{"capped"}},
	"teammem_extract_run": {fields: map[string]field{
		"outcome":        {kind: kindEnum, required: true, values: extractOutcomes},
		"memories_saved": {kind: kindCount},
		"skip_reason":    {kind: kindReason, values: extractSkips},
	}, outcome: fieldOutcome, outcomes: extractOutcomes},
	"teammem_extract_skipped": {fields: map[string]field{
		"reason": {kind: kindReason, required: true, values: extractSkips},
	}, outcome: constOutcome("skipped"), outcomes: []string{"skipped"}},
	"teammem_dream_run": {fields: map[string]field{
		"outcome":       {kind: kindEnum, required: true, values: dreamOutcomes},
		"files_touched": {kind: kindCount},
	}, outcome: fieldOutcome, outcomes: dreamOutcomes},
	"teammem_dream_skipped": {fields: map[string]field{
		"reason": {kind: kindReason, required: true, values: dreamSkips},
	}, outcome: constOutcome("skipped"), outcomes: []string{"skipped"}},
	// Session notes are counted in teammem_client_events_total only: the
	// run by outcome, the skip by reason.
	"teammem_session_memory_run": {fields: map[string]field{
		"outcome":     {kind: kindEnum, required: true, values: []string{"updated", "skipped", "error"}},
		"edits":       {kind: kindCount},
		"skip_reason": {kind: kindReason, values: SessionMemorySkips},
	}, outcome: fieldOutcome, outcomes: []string{"updated", "skipped", "error"}},
	"teammem_session_memory_skipped": {fields: map[string]field{
		"reason": {kind: kindReason, required: true, values: SessionMemorySkips},
	}, outcome: reasonOutcome, outcomes: append(slices.Clone(SessionMemorySkips), labelOther)},
}

// clientEvent is a validated event: its values by field name and kind.
type clientEvent struct {
	name   string
	schema eventSchema
	bools  map[string]bool
	nums   map[string]float64
	strs   map[string]string
}

func (e clientEvent) outcome() string { return e.schema.outcome(e) }

// label returns a reason field's value as a bounded label.
func (e clientEvent) label(name string) string {
	v := e.strs[name]
	for _, known := range e.schema.fields[name].values {
		if v == known {
			return v
		}
	}
	return labelOther
}

func syncStartedOutcome(e clientEvent) string {
	ok, set := e.bools["initial_pull_success"]
	switch {
	case !set:
		return "unknown"
	case ok:
		return "success"
	default:
		return "failure"
	}
}

// syncOutcome derives a pull's or push's outcome: on success noop (a push
// that uploaded nothing), not_modified or success; on failure the most
// specific of too_many_entries, conflict, the errorType, or failure.
func syncOutcome(e clientEvent) string {
	if e.bools["success"] {
		switch {
		case e.name == "tengu_team_mem_sync_push" && e.nums["files_uploaded"] == 0:
			return "noop"
		case e.bools["not_modified"]:
			return "not_modified"
		}
		return "success"
	}
	switch {
	case wire.RefusalReason(e.strs["error_code"]) == teammem.ReasonTooManyEntries:
		return "too_many_entries"
	case e.bools["conflict"]:
		return "conflict"
	case e.strs["errorType"] != "":
		return e.strs["errorType"]
	}
	return "failure"
}

func fieldOutcome(e clientEvent) string { return e.strs["outcome"] }

// parseClientEvent decodes and validates one event, or says why it is dropped.
func parseClientEvent(raw []byte) (clientEvent, string) {
	var wire struct {
		Name   string                     `json:"name"`
		Fields map[string]json.RawMessage `json:"fields"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&wire); err != nil || wire.Name == "" {
		return clientEvent{}, DropInvalid
	}
	schema, ok := clientEvents[wire.Name]
	if !ok {
		return clientEvent{}, DropUnknown
	}
	e := clientEvent{name: wire.Name, schema: schema, bools: map[string]bool{}, nums: map[string]float64{}, strs: map[string]string{}}
	for name, v := range wire.Fields {
		f, ok := schema.fields[name]
		if !ok {
			return clientEvent{}, DropInvalid
		}
		if string(bytes.TrimSpace(v)) == "null" {
			continue // an absent optional field, as JSON.stringify would omit it
		}
		if !e.set(name, f, v) {
			return clientEvent{}, DropInvalid
		}
	}
	for name, f := range schema.fields {
		if f.required && !e.has(name) {
			return clientEvent{}, DropInvalid
		}
	}
	return e, ""
}

// set stores field name's value v and reports whether it is of kind f.
func (e clientEvent) set(name string, f field, v json.RawMessage) bool {
	switch f.kind {
	case kindBool:
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return false
		}
		e.bools[name] = b
		return true
	case kindNumber, kindCount, kindStatus:
		n, ok := number(v)
		switch {
		case !ok || n < 0 || n > maxNumber:
			return false
		case f.kind != kindNumber && n != math.Trunc(n):
			return false
		case f.kind == kindStatus && (n < 100 || n > 599):
			return false
		}
		e.nums[name] = n
		return true
	default:
		var s string
		if json.Unmarshal(v, &s) != nil || !validString(f, s) {
			return false
		}
		e.strs[name] = s
		return true
	}
}

func (e clientEvent) has(name string) bool {
	_, b := e.bools[name]
	_, n := e.nums[name]
	_, s := e.strs[name]
	return b || n || s
}

// number parses a JSON number (v is valid JSON: a leading '-' or digit
// makes it a number).
func number(v json.RawMessage) (float64, bool) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, false
	}
	n, err := strconv.ParseFloat(string(v), 64)
	return n, err == nil && !math.IsInf(n, 0) && !math.IsNaN(n)
}

// validString reports whether s is an acceptable value of a string field.
func validString(f field, s string) bool {
	switch f.kind {
	case kindEnum:
		for _, v := range f.values {
			if s == v {
				return true
			}
		}
		return false
	case kindReason:
		return reasonRE.MatchString(s)
	case kindRuleIDs:
		return len(s) <= maxRuleIDsLength && ruleIDsRE.MatchString(s)
	}
	return false
}
