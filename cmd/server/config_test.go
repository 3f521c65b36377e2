package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigEnvThenFlags(t *testing.T) {
	c := defaultConfig()
	if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_ADDR": ":9000", "TEAMMEM_DEFAULT_MAX_ENTRIES": "7",
		"TEAMMEM_TOMBSTONE_RETENTION": "48h", "TEAMMEM_SECRET_POLICY": "reject"})); err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	c.bindFlags(fs)
	if err := fs.Parse([]string{"--addr", ":9100"}); err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":9100" || c.DefaultMaxEntries != 7 || c.TombstoneRetention != 48*time.Hour || c.SecretPolicy != "reject" {
		t.Fatalf("config = %+v", c)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
}

func TestConfigErrorsNameTheVariable(t *testing.T) {
	c := defaultConfig()
	err := c.loadEnv(envOf(map[string]string{"TEAMMEM_DEFAULT_MAX_ENTRIES": "many", "TEAMMEM_TOMBSTONE_RETENTION": "30 days"}))
	if err == nil || !strings.Contains(err.Error(), "TEAMMEM_DEFAULT_MAX_ENTRIES") || !strings.Contains(err.Error(), "TEAMMEM_TOMBSTONE_RETENTION") {
		t.Fatalf("loadEnv error = %v", err)
	}
	for name, mutate := range map[string]func(*Config){
		"TEAMMEM_SECRET_POLICY":  func(c *Config) { c.SecretPolicy = "ignore" },
		"TEAMMEM_BOOTSTRAP_KEY":  func(c *Config) { c.BootstrapKey = "short" },
		"TEAMMEM_DATABASE_URL":   func(c *Config) { c.DatabaseURL = "mysql://x" },
		"TEAMMEM_LOG_FORMAT":     func(c *Config) { c.LogFormat = "xml" },
		"TEAMMEM_MAX_BODY_BYTES": func(c *Config) { c.MaxBodyBytes = 0 },
		"TEAMMEM_DREAM_WORKERS":  func(c *Config) { c.DreamWorkers = 0 },
		"TEAMMEM_DREAM_WINDOW":   func(c *Config) { c.DreamWindow = "05:00-02:00" },
	} {
		c := defaultConfig()
		mutate(&c)
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("validate with bad %s = %v", name, err)
		}
	}
	c = defaultConfig()
	if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_DREAM_WORKERS": "two"})); err == nil || !strings.Contains(err.Error(), "TEAMMEM_DREAM_WORKERS") {
		t.Errorf("loadEnv with TEAMMEM_DREAM_WORKERS=two = %v", err)
	}
	c = defaultConfig()
	c.BootstrapKey = strings.Repeat("k", 40)
	if s := c.String(); strings.Contains(s, c.BootstrapKey) {
		t.Fatalf("String leaks the bootstrap key: %s", s)
	}
}

// TestMetricsConfig checks the metrics settings: a loopback listener by
// default, "off" for none, and the token a secret like the keys.
func TestMetricsConfig(t *testing.T) {
	c := defaultConfig()
	if c.MetricsAddr != "127.0.0.1:9464" || c.MetricsToken != "" || !c.metricsListener() {
		t.Fatalf("default metrics_addr %q token %q", c.MetricsAddr, c.MetricsToken)
	}
	token := strings.Repeat("t", 40)
	if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_METRICS_ADDR": "off", "TEAMMEM_METRICS_TOKEN": token})); err != nil {
		t.Fatal(err)
	}
	if c.metricsListener() || c.MetricsToken != token || c.validate() != nil {
		t.Fatalf("TEAMMEM_METRICS_ADDR=off: %+v %v", c, c.validate())
	}
	if s := c.String(); strings.Contains(s, token) || !strings.Contains(s, "metrics_token=***") {
		t.Errorf("String shows the metrics token: %s", s)
	}
	for name, mutate := range map[string]func(*Config){
		"TEAMMEM_METRICS_ADDR":  func(c *Config) { c.MetricsAddr = "9464" },
		"TEAMMEM_METRICS_TOKEN": func(c *Config) { c.MetricsToken = "short" },
	} {
		c := defaultConfig()
		mutate(&c)
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("validate with bad %s = %v", name, err)
		}
	}
}

// TestEnvVarsListIsComplete checks that envVars names exactly what loadEnv reads.
func TestEnvVarsListIsComplete(t *testing.T) {
	var read []string
	c := defaultConfig()
	_ = c.loadEnv(func(k string) string { read = append(read, k); return "" })
	slices.Sort(read)
	want := slices.Clone(envVars)
	slices.Sort(want)
	if !slices.Equal(read, want) {
		t.Fatalf("loadEnv reads %v, envVars lists %v", read, want)
	}
}

// TestComposeSetsOnlyKnownVariables parses docker-compose.yml: every TEAMMEM_*
// variable it sets must be one the server reads.
func TestComposeSetsOnlyKnownVariables(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Environment yaml.Node `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for name, svc := range compose.Services {
		for _, v := range envNames(svc.Environment) {
			if !strings.HasPrefix(v, "TEAMMEM_") {
				continue
			}
			seen++
			if !slices.Contains(envVars, v) {
				t.Errorf("service %s sets %s, which teammem-server does not read", name, v)
			}
		}
	}
	if seen == 0 {
		t.Fatal("docker-compose.yml sets no TEAMMEM_* variable")
	}
}

// envNames lists the variable names of a compose environment, in either
// map form or list ("NAME=value") form.
func envNames(n yaml.Node) []string {
	var out []string
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i < len(n.Content); i += 2 {
			out = append(out, n.Content[i].Value)
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			name, _, _ := strings.Cut(item.Value, "=")
			out = append(out, name)
		}
	}
	return out
}

// TestConfigHistoryRetention reads the history retention as days or as a
// duration of whole days, from the variable and from the flag, and names
// the variable when a value is wrong.
func TestConfigHistoryRetention(t *testing.T) {
	for v, want := range map[string]int{"30d": 30, "45": 45, "720h": 30} {
		c := defaultConfig()
		if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_HISTORY_RETENTION": v, "TEAMMEM_HISTORY_MAX_VERSIONS": "7"})); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if c.HistoryRetentionDays != want || c.HistoryMaxVersions != 7 || c.validate() != nil {
			t.Errorf("TEAMMEM_HISTORY_RETENTION=%s: %d days, %d versions, %v", v, c.HistoryRetentionDays, c.HistoryMaxVersions, c.validate())
		}
		if d := c.defaults(); d.HistoryRetentionDays != want || d.HistoryMaxVersions != 7 {
			t.Errorf("defaults = %+v", d)
		}
	}
	c := defaultConfig()
	if c.HistoryRetentionDays != 90 || c.HistoryMaxVersions != 100 || !strings.Contains(c.String(), "history_retention=90d") {
		t.Fatalf("built-in history retention: %s", c)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	c.bindFlags(fs)
	if err := fs.Parse([]string{"--history-retention", "2160h", "--history-max-versions", "3"}); err != nil {
		t.Fatal(err)
	}
	if c.HistoryRetentionDays != 90 || c.HistoryMaxVersions != 3 {
		t.Fatalf("flags: %d days, %d versions", c.HistoryRetentionDays, c.HistoryMaxVersions)
	}
	if err := fs.Parse([]string{"--history-retention", "36h"}); err == nil {
		t.Fatal("--history-retention 36h (not whole days) accepted")
	}
	for _, v := range []string{"36h", "ninety", "90 days"} {
		c := defaultConfig()
		if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_HISTORY_RETENTION": v})); err == nil || !strings.Contains(err.Error(), "TEAMMEM_HISTORY_RETENTION") {
			t.Errorf("TEAMMEM_HISTORY_RETENTION=%s: %v", v, err)
		}
	}
	for name, mutate := range map[string]func(*Config){
		"TEAMMEM_HISTORY_RETENTION":    func(c *Config) { c.HistoryRetentionDays = 0 },
		"TEAMMEM_HISTORY_MAX_VERSIONS": func(c *Config) { c.HistoryMaxVersions = 0 },
	} {
		c := defaultConfig()
		mutate(&c)
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("validate with bad %s = %v", name, err)
		}
	}
}
