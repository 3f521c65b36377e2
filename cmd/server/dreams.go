package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/server/dreamworker"
	"github.com/teammem/teammem/internal/server/jobs"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/server/telemetry"
	"github.com/teammem/teammem/internal/teammem"
)

// DreamConfig is the server's model and the limits of its dreams. Without
// a model (TEAMMEM_LLM_PROVIDER and TEAMMEM_LLM_MODEL unset) the server
// runs fine and POST /v1/dreams answers 400 saying what to set.
type DreamConfig struct {
	// LLM is the model provider, read by internal/llm from the same
	// variables as the client's (TEAMMEM_LLM_*, ANTHROPIC_API_KEY,
	// OPENAI_API_KEY); zero when none is configured.
	LLM llm.Config
	// Models are the model ids a dream may name (TEAMMEM_DREAM_MODELS,
	// comma-separated; default TEAMMEM_LLM_MODEL alone).
	Models []string
	// MaxTokens is each dream's token budget, every kind counted
	// (TEAMMEM_DREAM_MAX_TOKENS; 0: none).
	MaxTokens int
	// Timeout bounds each dream's run (TEAMMEM_DREAM_TIMEOUT).
	Timeout time.Duration
	// OrgConcurrency is how many dreams of an org run at once
	// (TEAMMEM_DREAM_ORG_CONCURRENCY).
	OrgConcurrency int
	// Heartbeat is how often a running dream's row is touched
	// (TEAMMEM_DREAM_HEARTBEAT); StaleAfter how old that heartbeat gets
	// before the reaper fails the dream (TEAMMEM_DREAM_STALE_AFTER; 0:
	// four heartbeats).
	Heartbeat, StaleAfter time.Duration
}

// dreamEnv lists the variables DreamConfig reads.
var dreamEnv = []string{llm.EnvProvider, llm.EnvModel, llm.EnvBaseURL, llm.EnvTimeout, llm.EnvMaxRetries,
	"TEAMMEM_DREAM_MODELS", "TEAMMEM_DREAM_MAX_TOKENS", "TEAMMEM_DREAM_TIMEOUT", "TEAMMEM_DREAM_ORG_CONCURRENCY",
	"TEAMMEM_DREAM_HEARTBEAT", "TEAMMEM_DREAM_STALE_AFTER"}

// defaultDreamConfig is DreamConfig's defaults.
func defaultDreamConfig() DreamConfig {
	return DreamConfig{Timeout: dreamworker.DefaultTimeout, OrgConcurrency: dreamworker.DefaultOrgConcurrency,
		Heartbeat: dreamworker.DefaultHeartbeat}
}

// loadEnv overlays the environment on d.
func (d *DreamConfig) loadEnv(e *envReader) {
	set := false // any TEAMMEM_LLM_* set asks for a model, configured whole
	for _, v := range dreamEnv[:5] {
		set = set || e.getenv(v) != ""
	}
	if set {
		c, err := llm.ConfigFromEnv(e.getenv)
		if err != nil {
			e.fail("the dreams' model: %v", err)
		} else {
			d.LLM = c
		}
	}
	if v := e.getenv("TEAMMEM_DREAM_MODELS"); v != "" {
		d.Models = nil
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" && !slices.Contains(d.Models, m) {
				d.Models = append(d.Models, m)
			}
		}
	}
	e.integer("TEAMMEM_DREAM_MAX_TOKENS", &d.MaxTokens)
	e.duration("TEAMMEM_DREAM_TIMEOUT", &d.Timeout)
	e.integer("TEAMMEM_DREAM_ORG_CONCURRENCY", &d.OrgConcurrency)
	e.duration("TEAMMEM_DREAM_HEARTBEAT", &d.Heartbeat)
	e.duration("TEAMMEM_DREAM_STALE_AFTER", &d.StaleAfter)
}

// validate appends d's mistakes to errs, naming the variables.
func (d DreamConfig) validate(errs *[]string) {
	if len(d.Models) > 0 && d.LLM.Model == "" {
		*errs = append(*errs, "TEAMMEM_DREAM_MODELS needs a model provider: set "+llm.EnvProvider+" and "+llm.EnvModel+" too")
	}
	if d.MaxTokens < 0 {
		*errs = append(*errs, "TEAMMEM_DREAM_MAX_TOKENS must be 0 (no budget) or more")
	}
	if d.Timeout < time.Second {
		*errs = append(*errs, "TEAMMEM_DREAM_TIMEOUT must be at least 1s")
	}
	if d.OrgConcurrency < 1 || d.OrgConcurrency > maxDreamWorkers {
		*errs = append(*errs, fmt.Sprintf("TEAMMEM_DREAM_ORG_CONCURRENCY must be between 1 and %d, got %d", maxDreamWorkers, d.OrgConcurrency))
	}
	if d.Heartbeat < 10*time.Millisecond {
		*errs = append(*errs, "TEAMMEM_DREAM_HEARTBEAT must be at least 10ms")
	}
	if d.StaleAfter != 0 && d.StaleAfter <= d.Heartbeat {
		*errs = append(*errs, "TEAMMEM_DREAM_STALE_AFTER must be longer than TEAMMEM_DREAM_HEARTBEAT")
	}
}

// models are the ids dreams may name: TEAMMEM_DREAM_MODELS, else the
// configured model; none without a model.
func (d DreamConfig) models() []string {
	switch {
	case d.LLM.Model == "":
		return nil
	case len(d.Models) > 0:
		return d.Models
	}
	return []string{d.LLM.Model}
}

// String describes d for the start-up log, the provider key redacted.
func (d DreamConfig) String() string {
	model := "none"
	if d.LLM.Model != "" {
		model = d.LLM.String()
	}
	return fmt.Sprintf("dream_llm={%s} dream_models=%s dream_max_tokens=%d dream_timeout=%s dream_org_concurrency=%d",
		model, strings.Join(d.models(), ","), d.MaxTokens, d.Timeout, d.OrgConcurrency)
}

// runner is the dream runner of d (with no models when none is set).
func (d DreamConfig) runner(maxStores int) *dreamworker.Runner {
	cfg := dreamworker.Config{Models: d.models(), MaxTokens: d.MaxTokens, Timeout: d.Timeout, OrgConcurrency: d.OrgConcurrency,
		Heartbeat: d.Heartbeat, StaleAfter: d.StaleAfter, MaxStores: maxStores}
	if len(cfg.Models) > 0 {
		base := d.LLM
		cfg.NewModel = func(id string) (llm.Model, error) {
			c := base
			c.Model = id
			return llm.New(c)
		}
	}
	return dreamworker.New(cfg)
}

// registerDreams puts the dream worker and its reaper on q. On SQLite one
// process owns the file, so every dream still running at start is an
// orphan of the process before: it fails at once instead of after the
// heartbeat cutoff.
func registerDreams(ctx context.Context, q *jobs.Queue, st teammem.Store, r *dreamworker.Runner, w dreamworker.Writer, m *telemetry.DreamMetrics, log *slog.Logger) error {
	if err := r.Register(dreamworker.RegisterParams{Queue: q, Store: st, Writer: w, Log: log, Metrics: m}); err != nil {
		return err
	}
	if _, ok := st.(*sqlite.DB); ok {
		return r.Reap(ctx, time.Now().Add(time.Second))
	}
	return nil
}
