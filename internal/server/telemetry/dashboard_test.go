package telemetry_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

// The operator files live at the repository root, three levels up.
var (
	dashboardFile   = filepath.Join("..", "..", "..", "deploy", "grafana", "dashboards", "teammem.json")
	datasourceFile  = filepath.Join("..", "..", "..", "deploy", "grafana", "provisioning", "datasources", "prometheus.yml")
	dashProviders   = filepath.Join("..", "..", "..", "deploy", "grafana", "provisioning", "dashboards", "teammem.yml")
	prometheusFile  = filepath.Join("..", "..", "..", "deploy", "prometheus", "prometheus.yml")
	composeFile     = filepath.Join("..", "..", "..", "docker-compose.yml")
	readmeFile      = filepath.Join("..", "..", "..", "README.md")
	grafanaDashDir  = "/var/lib/grafana/dashboards"
	dsVariable      = "DS_PROMETHEUS"
	provisionedUID  = "prometheus"
	scrapeJob       = "teammem"
	serverScrapeURL = "server:9464"
)

// metricInfo is what the registry says about one metric family.
type metricInfo struct {
	kind   string // counter, gauge, histogram, summary, untyped
	labels []string
}

// zeroPool is a store pool that reports nothing, for RegisterPool.
type zeroPool struct{}

func (zeroPool) PoolStats() teammem.PoolStats { return teammem.PoolStats{} }

// registered builds the metrics as the server wires them — telemetry.New,
// the client-event counters registered on the same registry (as
// httpapi does), the pool collector — and returns every metric family the
// registry describes, whether or not it has samples yet.
func registered(t *testing.T) map[string]metricInfo {
	t.Helper()
	m := telemetry.New()
	cm := telemetry.NewClientMetrics()
	if err := cm.Register(m.Registry); err != nil {
		t.Fatalf("register client metrics: %v", err)
	}
	m.RegisterPool(zeroPool{})

	out := map[string]metricInfo{}
	ch := make(chan *prometheus.Desc)
	go func() {
		m.Registry.Describe(ch)
		close(ch)
	}()
	for d := range ch {
		name, labels := parseDesc(t, d)
		out[name] = metricInfo{kind: "untyped", labels: labels}
	}

	// Types: vectors have no samples until used, so take theirs from the
	// Go type of each field of Metrics and ClientMetrics; collectors that
	// always emit (Go, process, pool) say theirs when gathered.
	setKind := func(c prometheus.Collector, kind string) {
		dc := make(chan *prometheus.Desc)
		go func() {
			c.Describe(dc)
			close(dc)
		}()
		for d := range dc {
			name, _ := parseDesc(t, d)
			if info, ok := out[name]; ok {
				info.kind = kind
				out[name] = info
			}
		}
	}
	// walk sets the kinds of a metrics struct's fields, and of the
	// metrics structs it holds (Dreams).
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if f := v.Field(i); f.Kind() == reflect.Pointer && f.Elem().Kind() == reflect.Struct && strings.HasSuffix(f.Elem().Type().Name(), "Metrics") {
				walk(f.Elem())
				continue
			}
			switch c := v.Field(i).Interface().(type) {
			case *prometheus.CounterVec:
				setKind(c, "counter")
			case *prometheus.GaugeVec:
				setKind(c, "gauge")
			case *prometheus.HistogramVec:
				setKind(c, "histogram")
			case *prometheus.SummaryVec:
				setKind(c, "summary")
			case prometheus.Counter:
				setKind(c, "counter")
			case prometheus.Gauge:
				setKind(c, "gauge")
			case prometheus.Histogram:
				setKind(c, "histogram")
			}
		}
	}
	for _, s := range []any{*m, *cm} {
		walk(reflect.ValueOf(s))
	}
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range families {
		if info, ok := out[f.GetName()]; ok {
			info.kind = strings.ToLower(f.GetType().String())
			out[f.GetName()] = info
		}
	}
	return out
}

var (
	descNameRE   = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*")`)
	descLabelsRE = regexp.MustCompile(`variableLabels: \{([^{}]*)\}\}$`)
	constraintRE = regexp.MustCompile(`^c\((.*)\)$`)
)

// parseDesc reads a Desc's name and variable labels from its String form,
// the only place client_golang exposes them.
func parseDesc(t *testing.T, d *prometheus.Desc) (string, []string) {
	t.Helper()
	s := d.String()
	nm, lm := descNameRE.FindStringSubmatch(s), descLabelsRE.FindStringSubmatch(s)
	if nm == nil || lm == nil {
		t.Fatalf("cannot read the name and labels of %s (did client_golang change Desc.String?)", s)
	}
	name, err := strconv.Unquote(nm[1])
	if err != nil {
		t.Fatalf("desc %s: %v", s, err)
	}
	var labels []string
	for _, l := range strings.Split(lm[1], ",") {
		if l = strings.TrimSpace(l); l != "" {
			if c := constraintRE.FindStringSubmatch(l); c != nil {
				l = c[1]
			}
			labels = append(labels, l)
		}
	}
	return name, labels
}

// ---- the dashboard -------------------------------------------------------

type dashTarget struct {
	RefID        string          `json:"refId"`
	Expr         string          `json:"expr"`
	LegendFormat string          `json:"legendFormat"`
	Datasource   json.RawMessage `json:"datasource"`
}

type dashPanel struct {
	ID          int             `json:"id"`
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Datasource  json.RawMessage `json:"datasource"`
	Targets     []dashTarget    `json:"targets"`
	Panels      []dashPanel     `json:"panels"` // a collapsed row's panels
	RawGridPos  json.RawMessage `json:"gridPos"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

type dashVariable struct {
	Name       string          `json:"name"`
	Type       string          `json:"type"`
	Query      json.RawMessage `json:"query"`
	Datasource json.RawMessage `json:"datasource"`
}

type dashboard struct {
	UID           string      `json:"uid"`
	Title         string      `json:"title"`
	SchemaVersion int         `json:"schemaVersion"`
	Panels        []dashPanel `json:"panels"`
	Templating    struct {
		List []dashVariable `json:"list"`
	} `json:"templating"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s is not valid JSON: %v", dashboardFile, err)
	}
	if dec.More() {
		t.Fatalf("%s holds more than one JSON value", dashboardFile)
	}
	return d
}

// queryPanels lists every panel that is not a row, rows' nested panels included.
func queryPanels(d dashboard) []dashPanel {
	var out []dashPanel
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			out = append(out, p)
		}
	}
	walk(d.Panels)
	return out
}

// variableQuery returns a query variable's query, given as a string or as
// {"query": "..."}.
func variableQuery(t *testing.T, v dashVariable) string {
	t.Helper()
	var s string
	if json.Unmarshal(v.Query, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(v.Query, &o); err != nil {
		t.Fatalf("variable %s: query is neither a string nor an object: %s", v.Name, v.Query)
	}
	return o.Query
}

func TestDashboardShape(t *testing.T) {
	d := loadDashboard(t)
	if d.UID != "teammem" || d.Title == "" {
		t.Errorf("uid %q, title %q: want uid teammem and a title", d.UID, d.Title)
	}
	if d.SchemaVersion < 36 {
		t.Errorf("schemaVersion %d: want a current Grafana schema (>= 36)", d.SchemaVersion)
	}
	panels := queryPanels(d)
	if len(panels) == 0 {
		t.Fatal("the dashboard has no panels")
	}
	vars := map[string]dashVariable{}
	for _, v := range d.Templating.List {
		vars[v.Name] = v
	}
	if v, ok := vars[dsVariable]; !ok || v.Type != "datasource" || variableQuery(t, v) != "prometheus" {
		t.Errorf("want a datasource variable %s of type prometheus, have %+v", dsVariable, v)
	}
	if v, ok := vars["org"]; !ok || v.Type != "query" || variableQuery(t, v) != "label_values(teammem_pushes_total, org)" {
		t.Errorf("want an org variable from label_values(teammem_pushes_total, org), have %+v", v)
	}

	ids := map[int]string{}
	var walkAll func([]dashPanel)
	walkAll = func(ps []dashPanel) {
		for _, p := range ps {
			if prev, dup := ids[p.ID]; dup || p.ID == 0 {
				t.Errorf("panel %q: id %d missing or already used by %q", p.Title, p.ID, prev)
			}
			ids[p.ID] = p.Title
			walkAll(p.Panels)
		}
	}
	walkAll(d.Panels)

	checkDS := func(where string, raw json.RawMessage) {
		var ds struct{ Type, UID string }
		if err := json.Unmarshal(raw, &ds); err != nil {
			t.Errorf("%s: datasource %s: %v", where, raw, err)
			return
		}
		if ds.Type != "prometheus" || (ds.UID != "${"+dsVariable+"}" && ds.UID != provisionedUID) {
			t.Errorf("%s: datasource %+v: want type prometheus, uid ${%s} or %s", where, ds, dsVariable, provisionedUID)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			checkDS("variable "+v.Name, v.Datasource)
		}
	}
	for _, p := range panels {
		if strings.TrimSpace(p.Title) == "" {
			t.Errorf("panel %d has no title", p.ID)
		}
		checkDS("panel "+p.Title, p.Datasource)
		n := 0
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) != "" {
				n++
			}
			checkDS("panel "+p.Title+" target "+tg.RefID, tg.Datasource)
		}
		if n == 0 {
			t.Errorf("panel %q has no target with an expr", p.Title)
		}
	}
	checkLayout(t, d.Panels)
}

// checkLayout checks that panels fit the 24-column grid and never overlap.
func checkLayout(t *testing.T, ps []dashPanel) {
	t.Helper()
	type cell struct{ x, y int }
	owner := map[cell]string{}
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			var g struct{ H, W, X, Y int }
			if err := json.Unmarshal(p.RawGridPos, &g); err != nil || g.H <= 0 || g.W <= 0 {
				t.Errorf("panel %q: bad gridPos %s", p.Title, p.RawGridPos)
				continue
			}
			if g.X < 0 || g.X+g.W > 24 {
				t.Errorf("panel %q: gridPos %+v leaves the 24-column grid", p.Title, g)
			}
			for x := g.X; x < g.X+g.W; x++ {
				for y := g.Y; y < g.Y+g.H; y++ {
					if o, taken := owner[cell{x, y}]; taken {
						t.Errorf("panels %q and %q overlap at x=%d y=%d", o, p.Title, x, y)
						return
					}
					owner[cell{x, y}] = p.Title
				}
			}
			walk(p.Panels)
		}
	}
	walk(ps)
}

// TestDashboardQueriesRegisteredMetrics checks every PromQL expression of
// the dashboard against the registry: each metric it selects is registered
// (a histogram's _bucket, _sum and _count series count as the histogram),
// each label it matches or groups by exists on a metric it selects, the org
// filter reaches every per-org metric, and legends name only grouped labels.
func TestDashboardQueriesRegisteredMetrics(t *testing.T) {
	d := loadDashboard(t)
	reg := registered(t)
	used := map[string]bool{}

	for _, p := range queryPanels(d) {
		for _, tg := range p.Targets {
			where := "panel " + strconv.Quote(p.Title) + " target " + tg.RefID
			q, err := parsePromQL(tg.Expr)
			if err != nil {
				t.Errorf("%s: %v in %s", where, err, tg.Expr)
				continue
			}
			allowed := map[string]bool{"job": true, "instance": true} // target labels Prometheus adds
			for _, sel := range q.selectors {
				info, base, ok := resolveMetric(reg, sel.metric)
				switch {
				case !ok && sel.metric == "up":
					continue // Prometheus's own per-target series
				case !ok:
					t.Errorf("%s: metric %s is not registered by the server", where, sel.metric)
					continue
				}
				used[base] = true
				for _, l := range info.labels {
					allowed[l] = true
				}
				if strings.HasSuffix(sel.metric, "_bucket") && base != sel.metric {
					allowed["le"] = true
				}
				if slices.Contains(info.labels, "org") {
					if m, ok := sel.matchers["org"]; !ok || m != `=~"$org"` {
						t.Errorf("%s: %s is per org but its selector lacks org=~\"$org\"", where, sel.metric)
					}
				}
			}
			if len(q.selectors) == 0 {
				t.Errorf("%s: no metric in %s", where, tg.Expr)
			}
			for _, l := range q.labels {
				if !allowed[l] {
					t.Errorf("%s: label %q is on none of the metrics the query selects", where, l)
				}
			}
			for _, l := range legendLabels(tg.LegendFormat) {
				if !slices.Contains(q.grouping, l) {
					t.Errorf("%s: legend uses {{%s}}, which the query does not keep (by %v)", where, l, q.grouping)
				}
			}
		}
	}

	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q := variableQuery(t, v)
		m := labelValuesRE.FindStringSubmatch(q)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, q)
			continue
		}
		info, ok := reg[m[1]]
		if !ok || !slices.Contains(info.labels, m[2]) {
			t.Errorf("variable %s: %s has no label %s (registered: %v)", v.Name, m[1], m[2], ok)
		}
	}

	// The dashboard shows every server metric of its own (not Go/process).
	for name := range reg {
		if strings.HasPrefix(name, "teammem_") && !used[name] {
			t.Errorf("no panel shows %s", name)
		}
	}
}

var labelValuesRE = regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)

// resolveMetric finds the family a series name belongs to: the name itself,
// or a histogram's (or summary's) _bucket, _sum or _count series.
func resolveMetric(reg map[string]metricInfo, name string) (metricInfo, string, bool) {
	if info, ok := reg[name]; ok {
		return info, name, true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		base, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		info, ok := reg[base]
		if ok && (info.kind == "histogram" || (info.kind == "summary" && suffix != "_bucket")) {
			return info, base, true
		}
	}
	return metricInfo{}, "", false
}

var legendLabelRE = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

func legendLabels(f string) []string {
	var out []string
	for _, m := range legendLabelRE.FindAllStringSubmatch(f, -1) {
		out = append(out, m[1])
	}
	return out
}

// ---- a small PromQL reader ------------------------------------------------

type tokKind int

const (
	tokIdent tokKind = iota
	tokString
	tokNumber
	tokPunct    // ( ) { } , and operators
	tokRange    // [5m], [$__rate_interval], [5m:1m]
	tokVariable // a Grafana variable outside a string: $org, ${org}
)

type token struct {
	kind tokKind
	text string
}

// lex splits a PromQL expression (with Grafana variables) into tokens.
func lex(s string) ([]token, error) {
	var out []token
	isIdentStart := func(c byte) bool { return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
	isIdentChar := func(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#': // a comment runs to the end of the line
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, errorf("unterminated string")
			}
			out = append(out, token{tokString, s[i : j+1]})
			i = j + 1
		case c == '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return nil, errorf("unterminated range")
			}
			out = append(out, token{tokRange, s[i : i+j+1]})
			i += j + 1
		case c == '$':
			j := i + 1
			if j < len(s) && s[j] == '{' {
				k := strings.IndexByte(s[j:], '}')
				if k < 0 {
					return nil, errorf("unterminated variable")
				}
				j += k + 1
			} else {
				for j < len(s) && isIdentChar(s[j]) {
					j++
				}
			}
			out = append(out, token{tokVariable, s[i:j]})
			i = j
		case '0' <= c && c <= '9' || c == '.' && i+1 < len(s) && '0' <= s[i+1] && s[i+1] <= '9':
			j := i
			for j < len(s) && (isIdentChar(s[j]) || s[j] == '.') {
				j++
			}
			out = append(out, token{tokNumber, s[i:j]})
			i = j
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			out = append(out, token{tokIdent, s[i:j]})
			i = j
		default:
			// Two-character operators first: == != =~ !~ >= <=.
			if i+1 < len(s) && strings.Contains("== != =~ !~ >= <=", s[i:i+2]) {
				out = append(out, token{tokPunct, s[i : i+2]})
				i += 2
				continue
			}
			if !strings.ContainsRune("(){},+-*/%^=<>", rune(c)) {
				return nil, errorf("unexpected character %q", c)
			}
			out = append(out, token{tokPunct, string(c)})
			i++
		}
	}
	return out, nil
}

type selector struct {
	metric   string
	matchers map[string]string // label -> operator + quoted value
}

type promQuery struct {
	selectors []selector
	labels    []string // every label named in a matcher or a grouping clause
	grouping  []string // labels named in by/on/... clauses
}

var (
	aggregators = []string{"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
		"bottomk", "topk", "quantile", "limitk", "limit_ratio"}
	groupingKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}
	binaryKeywords   = []string{"and", "or", "unless", "bool", "offset", "atan2"}
)

// parsePromQL finds the selectors, matchers and grouping labels of an
// expression. It is no full parser: it knows what an identifier is from
// what follows it, which is all the checks need.
func parsePromQL(expr string) (promQuery, error) {
	toks, err := lex(expr)
	if err != nil {
		return promQuery{}, err
	}
	var q promQuery
	next := func(i int) token {
		if i+1 < len(toks) {
			return toks[i+1]
		}
		return token{}
	}
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		if tk.kind != tokIdent {
			continue
		}
		switch {
		case slices.Contains(groupingKeywords, tk.text):
			if next(i).text != "(" {
				continue // group_left without a label list
			}
			i += 2
			for ; i < len(toks) && toks[i].text != ")"; i++ {
				if toks[i].kind == tokIdent {
					q.labels = append(q.labels, toks[i].text)
					q.grouping = append(q.grouping, toks[i].text)
				} else if toks[i].text != "," {
					return q, errorf("unexpected %q in a label list", toks[i].text)
				}
			}
		case slices.Contains(aggregators, tk.text) || slices.Contains(binaryKeywords, tk.text):
		case next(i).text == "(": // a function call
		default:
			sel := selector{metric: tk.text, matchers: map[string]string{}}
			if next(i).text == "{" {
				i += 2
				for ; i < len(toks) && toks[i].text != "}"; i++ {
					if toks[i].text == "," {
						continue
					}
					if i+2 >= len(toks) || toks[i].kind != tokIdent || toks[i+2].kind != tokString {
						return q, errorf("bad matcher in selector of %s", sel.metric)
					}
					sel.matchers[toks[i].text] = toks[i+1].text + toks[i+2].text
					q.labels = append(q.labels, toks[i].text)
					i += 2
				}
			}
			q.selectors = append(q.selectors, sel)
		}
	}
	return q, nil
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func TestParsePromQL(t *testing.T) {
	q, err := parsePromQL(`histogram_quantile(0.99, sum by (le, route) (rate(teammem_http_request_duration_seconds_bucket{route=~"$route", code!="a{b}"}[$__rate_interval]))) / on(instance) group_left up * 60`)
	if err != nil {
		t.Fatal(err)
	}
	var metrics []string
	for _, s := range q.selectors {
		metrics = append(metrics, s.metric)
	}
	if want := []string{"teammem_http_request_duration_seconds_bucket", "up"}; !slices.Equal(metrics, want) {
		t.Errorf("metrics %v, want %v", metrics, want)
	}
	if want := []string{"le", "route", "route", "code", "instance"}; !slices.Equal(q.labels, want) {
		t.Errorf("labels %v, want %v", q.labels, want)
	}
	if got := q.selectors[0].matchers["route"]; got != `=~"$route"` {
		t.Errorf("route matcher %s", got)
	}
	if _, err := parsePromQL(`sum(rate(x{a="b}[5m]))`); err == nil {
		t.Error("an unterminated string parsed")
	}
}

// ---- provisioning, Prometheus and compose ---------------------------------

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func TestProvisioning(t *testing.T) {
	var ds struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name, UID, Type, URL string
			IsDefault            bool `yaml:"isDefault"`
		} `yaml:"datasources"`
	}
	readYAML(t, datasourceFile, &ds)
	if ds.APIVersion != 1 || len(ds.Datasources) != 1 {
		t.Fatalf("%s: want apiVersion 1 and one datasource, have %+v", datasourceFile, ds)
	}
	if s := ds.Datasources[0]; s.UID != provisionedUID || s.Type != "prometheus" || s.URL != "http://prometheus:9090" {
		t.Errorf("datasource %+v: want uid %s, type prometheus, url http://prometheus:9090", s, provisionedUID)
	}

	var dp struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Name, Type string
			Options    struct{ Path string } `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, dashProviders, &dp)
	if dp.APIVersion != 1 || len(dp.Providers) != 1 {
		t.Fatalf("%s: want apiVersion 1 and one provider, have %+v", dashProviders, dp)
	}
	if p := dp.Providers[0]; p.Type != "file" || p.Options.Path != grafanaDashDir {
		t.Errorf("provider %+v: want a file provider on %s", p, grafanaDashDir)
	}

	var prom struct {
		ScrapeConfigs []struct {
			JobName        string `yaml:"job_name"`
			ScrapeInterval string `yaml:"scrape_interval"`
			MetricsPath    string `yaml:"metrics_path"`
			StaticConfigs  []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, prometheusFile, &prom)
	found := false
	for _, sc := range prom.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			if slices.Contains(st.Targets, serverScrapeURL) {
				found = true
				if sc.JobName != scrapeJob || sc.ScrapeInterval != "15s" || (sc.MetricsPath != "" && sc.MetricsPath != "/metrics") {
					t.Errorf("scrape config %+v: want job %s every 15s on /metrics", sc, scrapeJob)
				}
			}
		}
	}
	if !found {
		t.Errorf("%s does not scrape %s", prometheusFile, serverScrapeURL)
	}
}

// TestComposeMountsObservability checks that docker-compose.yml runs
// Prometheus and Grafana with the files above mounted where they are read.
func TestComposeMountsObservability(t *testing.T) {
	var compose struct {
		Services map[string]struct {
			Image   string   `yaml:"image"`
			Ports   []string `yaml:"ports"`
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	readYAML(t, composeFile, &compose)
	mounts := func(service string) map[string]string { // container path -> host path, cleaned
		out := map[string]string{}
		for _, v := range compose.Services[service].Volumes {
			parts := strings.Split(v, ":")
			if len(parts) < 2 {
				continue
			}
			out[path.Clean(parts[1])] = path.Clean(parts[0])
		}
		return out
	}
	for _, svc := range []string{"server", "prometheus", "grafana"} {
		if _, ok := compose.Services[svc]; !ok {
			t.Fatalf("docker-compose.yml has no %s service", svc)
		}
	}
	if img := compose.Services["prometheus"].Image; !strings.HasPrefix(img, "prom/prometheus") {
		t.Errorf("prometheus image %q", img)
	}
	if img := compose.Services["grafana"].Image; !strings.HasPrefix(img, "grafana/grafana") {
		t.Errorf("grafana image %q", img)
	}
	if !slices.Contains(compose.Services["grafana"].Ports, "3000:3000") {
		t.Errorf("grafana ports %v: want 3000:3000", compose.Services["grafana"].Ports)
	}
	want := map[string]map[string]string{
		"prometheus": {"/etc/prometheus/prometheus.yml": "deploy/prometheus/prometheus.yml"},
		"grafana": {
			"/etc/grafana/provisioning": "deploy/grafana/provisioning",
			grafanaDashDir:              "deploy/grafana/dashboards",
		},
	}
	for svc, ms := range want {
		have := mounts(svc)
		for dst, src := range ms {
			if have[dst] != src {
				t.Errorf("service %s mounts %q on %s, want %s", svc, have[dst], dst, src)
			}
		}
	}
}

// TestReadmeMetricsTable checks README's Operations metrics table against
// the registry: every teammem_ metric listed once, with its type and labels.
func TestReadmeMetricsTable(t *testing.T) {
	b, err := os.ReadFile(readmeFile)
	if err != nil {
		t.Fatal(err)
	}
	reg := registered(t)
	rowRE := regexp.MustCompile("^\\| `(teammem_[a-z0-9_]+)` \\| ([a-z]+) \\| ([^|]*) \\|")
	listed := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, kind := m[1], m[2]
		if listed[name] {
			t.Errorf("README lists %s twice", name)
		}
		listed[name] = true
		info, ok := reg[name]
		if !ok {
			t.Errorf("README lists %s, which the server does not register", name)
			continue
		}
		if kind != info.kind {
			t.Errorf("README: %s is a %s, not a %s", name, info.kind, kind)
		}
		var labels []string
		for _, l := range strings.Split(m[3], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" && l != "—" {
				labels = append(labels, l)
			}
		}
		want := slices.Clone(info.labels)
		sort.Strings(want)
		sort.Strings(labels)
		if !slices.Equal(labels, want) {
			t.Errorf("README: %s has labels %v, not %v", name, want, labels)
		}
	}
	for name := range reg {
		if strings.HasPrefix(name, "teammem_") && !listed[name] {
			t.Errorf("README's metrics table does not list %s", name)
		}
	}
}
