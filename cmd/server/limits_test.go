package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// TestLimitsConfig checks the limit settings: their documented defaults,
// the variables that override them, and validation naming the variable.
func TestLimitsConfig(t *testing.T) {
	c := defaultConfig()
	l := c.Limits
	if l.WriteRate != 10 || l.WriteBurst != 30 || l.UserWrite != (httpapi.RateLimit{Rate: 10, Burst: 30}) ||
		l.OrgWrite != (httpapi.RateLimit{Rate: 100, Burst: 300}) || l.Read != (httpapi.RateLimit{Rate: 100, Burst: 300}) ||
		l.UserRead != (httpapi.RateLimit{Rate: 100, Burst: 300}) || l.OrgRead != (httpapi.RateLimit{Rate: 1000, Burst: 3000}) ||
		l.MaxKeysPerUser != 20 || l.MaxStreamsPerKey != 4 || l.MaxEntriesCeiling != 5000 {
		t.Fatalf("default limits = %+v", l)
	}
	if c.defaults().MaxEntriesCeiling != 5000 {
		t.Fatalf("the ceiling does not reach the domain defaults: %+v", c.defaults())
	}
	if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_USER_WRITE_RATE": "2.5", "TEAMMEM_ORG_READ_BURST": "9",
		"TEAMMEM_MAX_KEYS_PER_USER": "3", "TEAMMEM_MAX_STREAMS_PER_KEY": "0", "TEAMMEM_MAX_ENTRIES_CEILING": "800",
		"TEAMMEM_READ_RATE": "0"})); err != nil {
		t.Fatal(err)
	}
	var api httpapi.Config
	c.Limits.apply(&api)
	if api.UserWrite.Rate != 2.5 || api.OrgRead.Burst != 9 || api.MaxKeysPerUser != 3 || api.MaxStreamsPerKey != 0 ||
		api.Read.Rate != 0 || api.WriteRate != 10 || c.defaults().MaxEntriesCeiling != 800 {
		t.Fatalf("after the environment: %+v %+v", c.Limits, api)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	if s := c.String(); !strings.Contains(s, "user_write=2.5/30") || !strings.Contains(s, "max_entries_ceiling=800") {
		t.Errorf("String = %s", s)
	}
	if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_ORG_WRITE_RATE": "fast"})); err == nil ||
		!strings.Contains(err.Error(), "TEAMMEM_ORG_WRITE_RATE") {
		t.Errorf("malformed rate: %v", err)
	}
	for name, mutate := range map[string]func(*Config){
		"TEAMMEM_USER_READ_RATE":      func(c *Config) { c.Limits.UserRead.Rate = -1 },
		"TEAMMEM_ORG_WRITE_BURST":     func(c *Config) { c.Limits.OrgWrite.Burst = 0 },
		"TEAMMEM_MAX_KEYS_PER_USER":   func(c *Config) { c.Limits.MaxKeysPerUser = -1 },
		"TEAMMEM_MAX_STREAMS_PER_KEY": func(c *Config) { c.Limits.MaxStreamsPerKey = -1 },
		"TEAMMEM_MAX_ENTRIES_CEILING": func(c *Config) { c.Limits.MaxEntriesCeiling = c.DefaultMaxEntries - 1 },
	} {
		c := defaultConfig()
		mutate(&c)
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("validate with bad %s = %v", name, err)
		}
	}
}

// TestMaxStoresPerOrgConfig checks TEAMMEM_MAX_STORES_PER_ORG: 1,000 by
// default, set by the variable and the flag, reaching the API's config,
// and refused outside 1 … the ceiling (or malformed) with a message that
// names the variable.
func TestMaxStoresPerOrgConfig(t *testing.T) {
	c := defaultConfig()
	if c.Limits.MaxStoresPerOrg != 1000 {
		t.Fatalf("default max stores per org = %d, want 1000", c.Limits.MaxStoresPerOrg)
	}
	if err := c.loadEnv(envOf(map[string]string{"TEAMMEM_MAX_STORES_PER_ORG": "25"})); err != nil {
		t.Fatal(err)
	}
	var api httpapi.Config
	c.Limits.apply(&api)
	if api.MaxStoresPerOrg != 25 || c.validate() != nil || !strings.Contains(c.String(), "max_stores_per_org=25") {
		t.Fatalf("after the environment: %+v, %v, %s", api, c.validate(), c.String())
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c.Limits.bindFlags(fs)
	if err := fs.Parse([]string{"--max-stores-per-org=7"}); err != nil || c.Limits.MaxStoresPerOrg != 7 {
		t.Fatalf("flag: %v, %d", err, c.Limits.MaxStoresPerOrg)
	}
	for _, v := range []int{0, -1, teammem.MaxStoresPerOrgCeiling + 1} {
		c := defaultConfig()
		c.Limits.MaxStoresPerOrg = v
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), "TEAMMEM_MAX_STORES_PER_ORG") {
			t.Errorf("validate with max stores per org %d = %v", v, err)
		}
	}
	d := defaultConfig()
	if err := d.loadEnv(envOf(map[string]string{"TEAMMEM_MAX_STORES_PER_ORG": "many"})); err == nil ||
		!strings.Contains(err.Error(), "TEAMMEM_MAX_STORES_PER_ORG") {
		t.Errorf("malformed cap: %v", err)
	}
}
