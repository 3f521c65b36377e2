package llm

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want Config
		// errIs and errHas describe the expected error; both empty means success.
		errIs  error
		errHas string
	}{
		{
			name:  "nothing set",
			env:   nil,
			errIs: ErrNotConfigured, errHas: EnvProvider,
		},
		{
			name:  "model without provider",
			env:   map[string]string{EnvModel: "claude-sonnet-4-5", EnvAnthropicKey: "k"},
			errIs: ErrNotConfigured, errHas: EnvProvider + " is not set",
		},
		{
			name:  "provider without model",
			env:   map[string]string{EnvProvider: "anthropic", EnvAnthropicKey: "k"},
			errIs: ErrNotConfigured, errHas: EnvModel + " is not set",
		},
		{
			name:   "unknown provider",
			env:    map[string]string{EnvProvider: "gemini", EnvModel: "x"},
			errHas: EnvProvider + `="gemini"`,
		},
		{
			name:   "anthropic without key",
			env:    map[string]string{EnvProvider: "anthropic", EnvModel: "claude-sonnet-4-5", EnvOpenAIKey: "wrong one"},
			errHas: EnvAnthropicKey,
		},
		{
			name: "anthropic",
			env:  map[string]string{EnvProvider: " Anthropic ", EnvModel: "claude-sonnet-4-5", EnvAnthropicKey: "sk-ant\n"},
			want: Config{Provider: ProviderAnthropic, Model: "claude-sonnet-4-5", APIKey: "sk-ant"},
		},
		{
			name:   "openai without key or base URL",
			env:    map[string]string{EnvProvider: "openai", EnvModel: "gpt-4o"},
			errHas: EnvOpenAIKey,
		},
		{
			name: "openai with base URL and no key (Ollama)",
			env:  map[string]string{EnvProvider: "openai", EnvModel: "llama3.1", EnvBaseURL: "http://localhost:11434/v1"},
			want: Config{Provider: ProviderOpenAI, Model: "llama3.1", BaseURL: "http://localhost:11434/v1"},
		},
		{
			name: "openai with key, timeout and retries",
			env:  map[string]string{EnvProvider: "openai", EnvModel: "gpt-4o", EnvOpenAIKey: "sk-o", EnvTimeout: "90s", EnvMaxRetries: "5"},
			want: Config{Provider: ProviderOpenAI, Model: "gpt-4o", APIKey: "sk-o", Timeout: 90 * time.Second, MaxRetries: 5},
		},
		{
			name: "zero retries means none",
			env:  map[string]string{EnvProvider: "openai", EnvModel: "m", EnvBaseURL: "http://h/v1", EnvMaxRetries: "0"},
			want: Config{Provider: ProviderOpenAI, Model: "m", BaseURL: "http://h/v1", MaxRetries: -1},
		},
		{
			name:   "bad timeout",
			env:    map[string]string{EnvProvider: "openai", EnvModel: "m", EnvBaseURL: "http://h/v1", EnvTimeout: "soon"},
			errHas: EnvTimeout,
		},
		{
			name:   "non-positive timeout",
			env:    map[string]string{EnvProvider: "openai", EnvModel: "m", EnvBaseURL: "http://h/v1", EnvTimeout: "0s"},
			errHas: EnvTimeout,
		},
		{
			name:   "bad retries",
			env:    map[string]string{EnvProvider: "openai", EnvModel: "m", EnvBaseURL: "http://h/v1", EnvMaxRetries: "-2"},
			errHas: EnvMaxRetries,
		},
		{
			name:   "bad base URL",
			env:    map[string]string{EnvProvider: "openai", EnvModel: "m", EnvBaseURL: "localhost:11434"},
			errHas: EnvBaseURL,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ConfigFromEnv(func(k string) string { return tc.env[k] })
			if tc.errIs == nil && tc.errHas == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if got != tc.want {
					t.Errorf("config = %#v, want %#v", got, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, config %v", got)
			}
			if tc.errIs != nil && !errors.Is(err, tc.errIs) {
				t.Errorf("err = %v, want errors.Is %v", err, tc.errIs)
			}
			if tc.errIs == nil && errors.Is(err, ErrNotConfigured) {
				t.Errorf("err = %v: a misconfiguration is not ErrNotConfigured", err)
			}
			if !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("err = %v, want it to mention %s", err, tc.errHas)
			}
		})
	}
}

func TestErrNotConfiguredSaysWhatToSet(t *testing.T) {
	t.Parallel()
	for _, v := range []string{EnvProvider, EnvModel, EnvAnthropicKey, EnvOpenAIKey, EnvBaseURL} {
		if !strings.Contains(ErrNotConfigured.Error(), v) {
			t.Errorf("ErrNotConfigured does not mention %s", v)
		}
	}
}

func TestConfigRedactsKey(t *testing.T) {
	t.Parallel()
	c := Config{Provider: ProviderOpenAI, Model: "gpt-4o", APIKey: "sk-very-secret"}
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%v %+v %#v %s", c, c, c, c)} {
		if strings.Contains(s, "sk-very-secret") || !strings.Contains(s, redacted) {
			t.Errorf("printed config %q leaks or hides the key's presence", s)
		}
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{}); !errors.Is(err, ErrNotConfigured) {
		t.Errorf("New(Config{}) err = %v, want ErrNotConfigured", err)
	}
	if _, err := New(Config{Provider: ProviderAnthropic, Model: "m"}); err == nil || !strings.Contains(err.Error(), EnvAnthropicKey) {
		t.Errorf("New without key err = %v", err)
	}
	m, err := New(Config{Provider: ProviderOpenAI, Model: "llama3.1", BaseURL: "http://localhost:11434/v1"})
	if err != nil || m.Name() != "openai/llama3.1" {
		t.Errorf("New = %v, %v", m, err)
	}
}

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want Config
	}{
		{Config{}, Config{Timeout: DefaultTimeout, MaxRetries: DefaultMaxRetries}},
		{Config{Timeout: time.Second, MaxRetries: 7}, Config{Timeout: time.Second, MaxRetries: 7}},
		{Config{MaxRetries: -1}, Config{Timeout: DefaultTimeout, MaxRetries: 0}},
	} {
		if got := tc.in.withDefaults(); got != tc.want {
			t.Errorf("withDefaults(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
