package main

import (
	"slices"
	"strings"
	"testing"
)

// TestDreamConfig: no model is fine (no dreams); a model makes its id the
// only allowed one unless TEAMMEM_DREAM_MODELS lists others; mistakes name
// their variable; the provider key never shows.
func TestDreamConfig(t *testing.T) {
	c := defaultConfig()
	if err := c.loadEnv(envOf(nil)); err != nil || c.validate() != nil || c.Dream.models() != nil {
		t.Fatalf("no model: %v %v %v", err, c.validate(), c.Dream.models())
	}
	key := "sk-ant-" + strings.Repeat("x", 40)
	c = defaultConfig()
	if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_LLM_PROVIDER": "anthropic", "TEAMMEM_LLM_MODEL": "claude-x",
		"ANTHROPIC_API_KEY": key, "TEAMMEM_DREAM_MAX_TOKENS": "5000", "TEAMMEM_DREAM_TIMEOUT": "10m"})); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Dream.models(), []string{"claude-x"}) || c.Dream.MaxTokens != 5000 || c.validate() != nil {
		t.Fatalf("model: %v %+v %v", c.Dream.models(), c.Dream, c.validate())
	}
	if s := c.String(); strings.Contains(s, key) || !strings.Contains(s, "claude-x") {
		t.Fatalf("String: %s", s)
	}
	if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_DREAM_MODELS": "a, b,a"})); err != nil || !slices.Equal(c.Dream.models(), []string{"a", "b"}) {
		t.Fatalf("TEAMMEM_DREAM_MODELS: %v %v", err, c.Dream.models())
	}
	for env, name := range map[string]map[string]string{
		"TEAMMEM_LLM_PROVIDER":          {"TEAMMEM_LLM_PROVIDER": "acme", "TEAMMEM_LLM_MODEL": "m"},
		"ANTHROPIC_API_KEY":             {"TEAMMEM_LLM_PROVIDER": "anthropic", "TEAMMEM_LLM_MODEL": "m"},
		"TEAMMEM_LLM_MODEL":             {"TEAMMEM_LLM_BASE_URL": "http://127.0.0.1:11434/v1"},
		"TEAMMEM_DREAM_TIMEOUT":         {"TEAMMEM_DREAM_TIMEOUT": "soon"},
		"TEAMMEM_DREAM_ORG_CONCURRENCY": {"TEAMMEM_DREAM_ORG_CONCURRENCY": "0"},
		"TEAMMEM_DREAM_MODELS":          {"TEAMMEM_DREAM_MODELS": "m"},
	} {
		c := defaultConfig()
		err := c.loadEnv(envOf(name))
		if err == nil {
			err = c.validate()
		}
		if err == nil || !strings.Contains(err.Error(), env) {
			t.Errorf("%v: error %v, want one naming %s", name, err, env)
		}
	}
}
