package main

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/server/store"
	"github.com/teammem/teammem/internal/teammem"
)

// Config is the server's configuration: defaults in code, then TEAMMEM_*
// environment variables, then flags.
type Config struct {
	Addr string
	// MetricsAddr is the metrics listener's address; MetricsOff (or empty)
	// opens none.
	MetricsAddr string
	// MetricsToken, when set, also serves /metrics on Addr to requests
	// carrying it as a bearer token.
	MetricsToken       string
	DatabaseURL        string
	DefaultMaxEntries  int
	MaxEntryBytes      int
	MaxBodyBytes       int64
	SecretPolicy       string
	TombstoneRetention time.Duration
	BootstrapKey       string
	AdminKey           string
	LogFormat          string
	LogLevel           string
	ShutdownTimeout    time.Duration

	// HistoryRetentionDays and HistoryMaxVersions are the history
	// retention of every org that sets none of its own.
	HistoryRetentionDays int
	HistoryMaxVersions   int
	// Limits are the rate limits and caps against abuse.
	Limits LimitsConfig

	// PublicURL is the server's URL as browsers reach it; https makes the
	// console's cookies Secure even where TLS ends before teammem.
	PublicURL string
	// TrustedProxies lists the proxies (CIDRs or addresses) whose
	// X-Forwarded-For and X-Forwarded-Proto are believed, comma-separated.
	TrustedProxies string

	// DreamWorkers is how many dreams this replica runs at once
	// (TEAMMEM_DREAM_WORKERS, the job queue's "dreams" queue).
	DreamWorkers int
	// DreamWindow is the UTC window nightly dreams start in, "HH:MM-HH:MM"
	// (TEAMMEM_DREAM_WINDOW, jobs.ParseWindow).
	DreamWindow string
	// Dream is the dreams' model and limits (dreams.go).
	Dream DreamConfig
}

// envVars lists every environment variable the server reads; a test checks
// that docker-compose.yml sets only these.
var envVars = append([]string{
	"TEAMMEM_ADDR", "TEAMMEM_METRICS_ADDR", "TEAMMEM_METRICS_TOKEN", "TEAMMEM_DATABASE_URL", "TEAMMEM_DEFAULT_MAX_ENTRIES",
	"TEAMMEM_MAX_ENTRY_BYTES", "TEAMMEM_MAX_BODY_BYTES", "TEAMMEM_SECRET_POLICY", "TEAMMEM_TOMBSTONE_RETENTION",
	"TEAMMEM_HISTORY_RETENTION", "TEAMMEM_HISTORY_MAX_VERSIONS",
	"TEAMMEM_BOOTSTRAP_KEY", "TEAMMEM_ADMIN_KEY", "TEAMMEM_LOG_FORMAT", "TEAMMEM_LOG_LEVEL", "TEAMMEM_SHUTDOWN_TIMEOUT",
	"TEAMMEM_PUBLIC_URL", "TEAMMEM_TRUSTED_PROXIES", "TEAMMEM_DREAM_WORKERS",
	"TEAMMEM_DREAM_WINDOW",
}, append(limitsEnv, dreamEnv...)...)

// maxDreamWorkers caps TEAMMEM_DREAM_WORKERS: each dream holds a model
// conversation and a store's worth of reads.
const maxDreamWorkers = 64

const (
	// DefaultMetricsAddr is the metrics listener's address unless one is
	// configured: loopback only, so that a server whose API is public keeps
	// its metrics (every org's slug and traffic) to the machine.
	DefaultMetricsAddr = "127.0.0.1:9464"
	// MetricsOff as TEAMMEM_METRICS_ADDR opens no metrics listener at all.
	MetricsOff = "off"
)

func defaultConfig() Config {
	return Config{
		Addr:               ":8080",
		MetricsAddr:        DefaultMetricsAddr,
		DatabaseURL:        store.DefaultDSN,
		DefaultMaxEntries:  teammem.DefaultServerDefaults.MaxEntries,
		MaxEntryBytes:      teammem.DefaultServerDefaults.MaxEntryBytes,
		MaxBodyBytes:       4 << 20,
		SecretPolicy:       string(teammem.SecretPolicySkip),
		TombstoneRetention: 720 * time.Hour,
		Limits:             defaultLimits(),
		LogFormat:          "json",
		LogLevel:           "info",
		ShutdownTimeout:    15 * time.Second,
		DreamWorkers:       jobs.DefaultDreamWorkers,
		DreamWindow:        jobs.DefaultDreamWindow,
		Dream:              defaultDreamConfig(),

		HistoryRetentionDays: teammem.DefaultServerDefaults.HistoryRetentionDays,
		HistoryMaxVersions:   teammem.DefaultServerDefaults.HistoryMaxVersions,
	}
}

// loadEnv overlays environment variables on c; malformed values are errors
// that name the variable.
func (c *Config) loadEnv(getenv func(string) string) error {
	e := &envReader{getenv: getenv}
	e.str("TEAMMEM_ADDR", &c.Addr)
	e.str("TEAMMEM_METRICS_ADDR", &c.MetricsAddr)
	e.str("TEAMMEM_METRICS_TOKEN", &c.MetricsToken)
	e.str("TEAMMEM_DATABASE_URL", &c.DatabaseURL)
	e.integer("TEAMMEM_DEFAULT_MAX_ENTRIES", &c.DefaultMaxEntries)
	e.integer("TEAMMEM_MAX_ENTRY_BYTES", &c.MaxEntryBytes)
	body := int(c.MaxBodyBytes)
	e.integer("TEAMMEM_MAX_BODY_BYTES", &body)
	c.MaxBodyBytes = int64(body)
	e.str("TEAMMEM_SECRET_POLICY", &c.SecretPolicy)
	e.duration("TEAMMEM_TOMBSTONE_RETENTION", &c.TombstoneRetention)
	if v := getenv("TEAMMEM_HISTORY_RETENTION"); v != "" {
		days, err := parseDays(v)
		if err != nil {
			e.fail("TEAMMEM_HISTORY_RETENTION=%q %v", v, err)
		}
		c.HistoryRetentionDays = days
	}
	e.integer("TEAMMEM_HISTORY_MAX_VERSIONS", &c.HistoryMaxVersions)
	e.str("TEAMMEM_BOOTSTRAP_KEY", &c.BootstrapKey)
	e.str("TEAMMEM_ADMIN_KEY", &c.AdminKey)
	c.Limits.loadEnv(e)
	e.str("TEAMMEM_LOG_FORMAT", &c.LogFormat)
	e.str("TEAMMEM_LOG_LEVEL", &c.LogLevel)
	e.duration("TEAMMEM_SHUTDOWN_TIMEOUT", &c.ShutdownTimeout)
	e.str("TEAMMEM_PUBLIC_URL", &c.PublicURL)
	e.str("TEAMMEM_TRUSTED_PROXIES", &c.TrustedProxies)
	e.integer("TEAMMEM_DREAM_WORKERS", &c.DreamWorkers)
	e.str("TEAMMEM_DREAM_WINDOW", &c.DreamWindow)
	c.Dream.loadEnv(e)
	if len(e.errs) > 0 {
		return fmt.Errorf("%s", strings.Join(e.errs, "; "))
	}
	return nil
}

// bindFlags registers flags whose defaults are the env-loaded values, so a
// flag overrides its variable.
func (c *Config) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address (TEAMMEM_ADDR)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "listen address for /metrics, apart from the API; \"off\" opens none (TEAMMEM_METRICS_ADDR)")
	fs.StringVar(&c.DatabaseURL, "database-url", c.DatabaseURL, "sqlite://path.db, sqlite:///abs/path.db or postgres://... (TEAMMEM_DATABASE_URL)")
	fs.IntVar(&c.DefaultMaxEntries, "default-max-entries", c.DefaultMaxEntries, "entries per space unless the org sets its own (TEAMMEM_DEFAULT_MAX_ENTRIES)")
	fs.IntVar(&c.MaxEntryBytes, "max-entry-bytes", c.MaxEntryBytes, "largest entry in bytes (TEAMMEM_MAX_ENTRY_BYTES)")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", c.MaxBodyBytes, "largest request body in bytes (TEAMMEM_MAX_BODY_BYTES)")
	fs.StringVar(&c.SecretPolicy, "secret-policy", c.SecretPolicy, "skip or reject entries holding secrets, unless the org sets its own (TEAMMEM_SECRET_POLICY)")
	fs.DurationVar(&c.TombstoneRetention, "tombstone-retention", c.TombstoneRetention, "how long deletions are remembered (TEAMMEM_TOMBSTONE_RETENTION)")
	fs.Var((*daysValue)(&c.HistoryRetentionDays), "history-retention",
		"how long entry versions are kept, as days (90d) or whole days as a duration (2160h), unless the org sets its own (TEAMMEM_HISTORY_RETENTION)")
	fs.IntVar(&c.HistoryMaxVersions, "history-max-versions", c.HistoryMaxVersions,
		"versions kept per entry, unless the org sets its own (TEAMMEM_HISTORY_MAX_VERSIONS)")
	c.Limits.bindFlags(fs)
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "json or text (TEAMMEM_LOG_FORMAT)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error (TEAMMEM_LOG_LEVEL)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "how long shutdown waits for in-flight requests (TEAMMEM_SHUTDOWN_TIMEOUT)")
	fs.StringVar(&c.PublicURL, "public-url", c.PublicURL,
		"the server's URL as browsers reach it, e.g. https://teammem.example.com; https makes the console's cookies Secure (TEAMMEM_PUBLIC_URL)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", c.TrustedProxies,
		"comma-separated CIDRs or addresses of the reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed; empty: none (TEAMMEM_TRUSTED_PROXIES)")
}

// validate checks the configuration once, naming the variable at fault.
func (c Config) validate() error {
	var errs []string
	if _, _, err := store.Parse(c.DatabaseURL); err != nil {
		errs = append(errs, "TEAMMEM_DATABASE_URL: "+err.Error())
	}
	if c.DreamWorkers < 1 || c.DreamWorkers > maxDreamWorkers {
		errs = append(errs, fmt.Sprintf("TEAMMEM_DREAM_WORKERS must be between 1 and %d (dreams one replica runs at once), got %d", maxDreamWorkers, c.DreamWorkers))
	}
	if _, err := jobs.ParseWindow(c.DreamWindow); err != nil {
		errs = append(errs, "TEAMMEM_DREAM_WINDOW (the UTC window nightly dreams start in): "+err.Error())
	}
	if c.DefaultMaxEntries < 1 {
		errs = append(errs, "TEAMMEM_DEFAULT_MAX_ENTRIES must be at least 1")
	}
	if c.MaxEntryBytes < 1 {
		errs = append(errs, "TEAMMEM_MAX_ENTRY_BYTES must be at least 1")
	}
	if c.MaxBodyBytes < 1024 {
		errs = append(errs, "TEAMMEM_MAX_BODY_BYTES must be at least 1024")
	}
	if !teammem.SecretPolicy(c.SecretPolicy).Valid() {
		errs = append(errs, fmt.Sprintf("TEAMMEM_SECRET_POLICY=%q: want skip or reject", c.SecretPolicy))
	}
	if c.TombstoneRetention < time.Minute {
		errs = append(errs, "TEAMMEM_TOMBSTONE_RETENTION must be at least 1m")
	}
	if c.HistoryRetentionDays < 1 || c.HistoryRetentionDays > teammem.MaxHistoryRetentionDays {
		errs = append(errs, fmt.Sprintf("TEAMMEM_HISTORY_RETENTION must be between 1d and %dd", teammem.MaxHistoryRetentionDays))
	}
	if c.HistoryMaxVersions < 1 || c.HistoryMaxVersions > teammem.MaxHistoryMaxVersions {
		errs = append(errs, fmt.Sprintf("TEAMMEM_HISTORY_MAX_VERSIONS must be between 1 and %d", teammem.MaxHistoryMaxVersions))
	}
	if c.BootstrapKey != "" && len(c.BootstrapKey) < teammem.MinKeyLength {
		errs = append(errs, fmt.Sprintf("TEAMMEM_BOOTSTRAP_KEY must be at least %d characters", teammem.MinKeyLength))
	}
	if c.metricsListener() {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			errs = append(errs, fmt.Sprintf("TEAMMEM_METRICS_ADDR=%q: want host:port, or %q for no metrics listener", c.MetricsAddr, MetricsOff))
		}
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < teammem.MinKeyLength {
		errs = append(errs, fmt.Sprintf("TEAMMEM_METRICS_TOKEN must be at least %d characters", teammem.MinKeyLength))
	}
	if c.AdminKey != "" && len(c.AdminKey) < teammem.MinKeyLength {
		errs = append(errs, fmt.Sprintf("TEAMMEM_ADMIN_KEY must be at least %d characters", teammem.MinKeyLength))
	}
	c.Limits.validate(c.DefaultMaxEntries, &errs)
	c.Dream.validate(&errs)
	if err := validPublicURL(c.PublicURL); err != nil {
		errs = append(errs, fmt.Sprintf("TEAMMEM_PUBLIC_URL=%q: %v", redactURL(c.PublicURL), err))
	}
	if _, err := parseTrustedProxies(c.TrustedProxies); err != nil {
		errs = append(errs, fmt.Sprintf("TEAMMEM_TRUSTED_PROXIES: %v", err))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Sprintf("TEAMMEM_LOG_FORMAT=%q: want json or text", c.LogFormat))
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		errs = append(errs, fmt.Sprintf("TEAMMEM_LOG_LEVEL=%q: want debug, info, warn or error", c.LogLevel))
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid configuration: %s", strings.Join(errs, "; "))
	}
	return nil
}

// metricsListener reports whether the configuration opens a metrics listener.
func (c Config) metricsListener() bool { return c.MetricsAddr != "" && c.MetricsAddr != MetricsOff }

// defaults returns the domain defaults the configuration implies.
func (c Config) defaults() teammem.ServerDefaults {
	return teammem.ServerDefaults{MaxEntries: c.DefaultMaxEntries, MaxEntryBytes: c.MaxEntryBytes, SecretPolicy: teammem.SecretPolicy(c.SecretPolicy),
		HistoryRetentionDays: c.HistoryRetentionDays, HistoryMaxVersions: c.HistoryMaxVersions, MaxEntriesCeiling: c.Limits.MaxEntriesCeiling}
}

// parseDays reads a history retention: days ("90d", or a bare "90") or a
// Go duration of whole days ("2160h"), since orgs set it in days.
func parseDays(v string) (int, error) {
	if n, err := strconv.Atoi(strings.TrimSuffix(v, "d")); err == nil {
		return n, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d%(24*time.Hour) != 0 {
		return 0, fmt.Errorf("is not a number of days like 90d or a duration of whole days like 2160h")
	}
	return int(d / (24 * time.Hour)), nil
}

// daysValue is a flag holding a number of days, in parseDays's syntax.
type daysValue int

func (d *daysValue) String() string { return strconv.Itoa(int(*d)) + "d" }

// Set parses a flag value.
func (d *daysValue) Set(v string) error {
	n, err := parseDays(v)
	if err != nil {
		return fmt.Errorf("%q %w", v, err)
	}
	*d = daysValue(n)
	return nil
}

// Type names the value in --help.
func (d *daysValue) Type() string { return "days" }

// String prints the configuration with secrets redacted.
func (c Config) String() string {
	key := ""
	if c.BootstrapKey != "" {
		key = "***"
	}
	admin := ""
	if c.AdminKey != "" {
		admin = "***"
	}
	metricsToken := ""
	if c.MetricsToken != "" {
		metricsToken = "***"
	}
	return fmt.Sprintf("addr=%s metrics_addr=%s metrics_token=%s database=%s max_entries=%d max_entry_bytes=%d max_body_bytes=%d secret_policy=%s tombstone_retention=%s history_retention=%dd history_max_versions=%d %s bootstrap_key=%s admin_key=%s public_url=%s trusted_proxies=%s dream_workers=%d %s",
		c.Addr, c.MetricsAddr, metricsToken, store.Redact(c.DatabaseURL), c.DefaultMaxEntries, c.MaxEntryBytes, c.MaxBodyBytes, c.SecretPolicy, c.TombstoneRetention,
		c.HistoryRetentionDays, c.HistoryMaxVersions, c.Limits, key, admin, redactURL(c.PublicURL), c.TrustedProxies, c.DreamWorkers, c.Dream)
}
