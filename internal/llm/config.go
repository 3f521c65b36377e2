package llm

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Providers accepted in Config.Provider.
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultTimeout    = 120 * time.Second
	DefaultMaxRetries = 3
)

// The environment variables ConfigFromEnv reads. Error messages name them.
const (
	EnvProvider     = "TEAMMEM_LLM_PROVIDER"
	EnvModel        = "TEAMMEM_LLM_MODEL"
	EnvBaseURL      = "TEAMMEM_LLM_BASE_URL"
	EnvTimeout      = "TEAMMEM_LLM_TIMEOUT"
	EnvMaxRetries   = "TEAMMEM_LLM_MAX_RETRIES"
	EnvAnthropicKey = "ANTHROPIC_API_KEY"
	EnvOpenAIKey    = "OPENAI_API_KEY"
)

// ErrNotConfigured means no model is configured: TEAMMEM_LLM_PROVIDER or
// TEAMMEM_LLM_MODEL is unset. Commands that need a model report it and exit
// non-zero; nothing else depends on a model.
var ErrNotConfigured = errors.New("no language model configured: set " +
	EnvProvider + " (anthropic or openai) and " + EnvModel +
	", with " + EnvAnthropicKey + " for anthropic, or " + EnvOpenAIKey +
	" for openai (optional when " + EnvBaseURL + " points at an OpenAI-compatible server such as Ollama)")

// Config selects and tunes a model provider. Config is a value: ConfigFromEnv
// fills it from the environment, flags may override fields, New validates it.
// There is no default model; model names change too often to bake one in.
type Config struct {
	// Provider is ProviderAnthropic or ProviderOpenAI.
	Provider string
	// Model is the provider's model name, e.g. "claude-sonnet-4-5" or "llama3.1".
	Model string
	// BaseURL overrides the provider's endpoint. For OpenAI-compatible servers
	// it includes the version path ("http://localhost:11434/v1"); for
	// Anthropic it is the host root ("https://proxy.example.com").
	BaseURL string
	// APIKey authenticates to the provider. Required for Anthropic, and for
	// OpenAI unless BaseURL is set.
	APIKey string
	// Timeout bounds each HTTP attempt; zero means DefaultTimeout. A timed
	// out attempt is not retried.
	Timeout time.Duration
	// MaxRetries is how many times a failed attempt is retried after the
	// first; zero means DefaultMaxRetries, negative means never.
	MaxRetries int
}

// ConfigFromEnv reads a Config through getenv (os.Getenv in production) and
// validates it. It returns an error wrapping ErrNotConfigured when the
// provider or model is unset, and an error naming the variable for any
// other bad or missing value.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		Provider: strings.ToLower(strings.TrimSpace(getenv(EnvProvider))),
		Model:    strings.TrimSpace(getenv(EnvModel)),
		BaseURL:  strings.TrimSpace(getenv(EnvBaseURL)),
	}
	switch cfg.Provider {
	case ProviderAnthropic:
		cfg.APIKey = strings.TrimSpace(getenv(EnvAnthropicKey))
	case ProviderOpenAI:
		cfg.APIKey = strings.TrimSpace(getenv(EnvOpenAIKey))
	}
	if v := strings.TrimSpace(getenv(EnvTimeout)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("%s=%q: want a positive duration such as 90s or 5m", EnvTimeout, v)
		}
		cfg.Timeout = d
	}
	if v := strings.TrimSpace(getenv(EnvMaxRetries)); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return Config{}, fmt.Errorf("%s=%q: want a whole number, 0 or more", EnvMaxRetries, v)
		}
		cfg.MaxRetries = n
		if n == 0 {
			cfg.MaxRetries = -1 // Config's zero means the default; the user asked for none.
		}
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate reports whether c can build a Model. It returns an error wrapping
// ErrNotConfigured when Provider or Model is empty, and an error naming the
// environment variable for anything else.
func (c Config) Validate() error {
	switch {
	case c.Provider == "" && c.Model == "":
		return ErrNotConfigured
	case c.Provider == "":
		return fmt.Errorf("%s is not set: %w", EnvProvider, ErrNotConfigured)
	case c.Provider != ProviderAnthropic && c.Provider != ProviderOpenAI:
		return fmt.Errorf("%s=%q: want anthropic or openai", EnvProvider, c.Provider)
	case c.Model == "":
		return fmt.Errorf("%s is not set: %w", EnvModel, ErrNotConfigured)
	}
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s=%q: want an http:// or https:// URL", EnvBaseURL, c.BaseURL)
		}
	}
	switch {
	case c.Provider == ProviderAnthropic && c.APIKey == "":
		return fmt.Errorf("%s is not set; %s=anthropic needs it", EnvAnthropicKey, EnvProvider)
	case c.Provider == ProviderOpenAI && c.APIKey == "" && c.BaseURL == "":
		return fmt.Errorf("%s is not set; api.openai.com needs it (for a local OpenAI-compatible server, set %s instead)", EnvOpenAIKey, EnvBaseURL)
	case c.Timeout < 0:
		return fmt.Errorf("%s: negative timeout %s", EnvTimeout, c.Timeout)
	}
	return nil
}

// withDefaults returns c with zero Timeout and MaxRetries replaced by the
// defaults and a negative MaxRetries by zero.
func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = DefaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	return c
}

// String describes c for logs and `status` output, with the API key redacted.
func (c Config) String() string {
	key := ""
	if c.APIKey != "" {
		key = redacted
	}
	return fmt.Sprintf("provider=%s model=%s base_url=%s api_key=%s timeout=%s max_retries=%d",
		c.Provider, c.Model, c.BaseURL, key, c.Timeout, c.MaxRetries)
}

// GoString keeps %#v from printing the API key.
func (c Config) GoString() string { return "llm.Config{" + c.String() + "}" }

// New returns the Model that c selects, after validating c.
func New(c Config) (Model, error) {
	return newModel(c, defaultBackoff)
}

func newModel(c Config, b backoffPolicy) (Model, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	c = c.withDefaults()
	var p provider
	switch c.Provider {
	case ProviderAnthropic:
		p = newAnthropic(c)
	default:
		p = newOpenAI(c)
	}
	return &client{cfg: c, provider: p, backoff: b}, nil
}
