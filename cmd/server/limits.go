package main

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/teammem/teammem/internal/server/httpapi"
	"github.com/teammem/teammem/internal/teammem"
)

// LimitsConfig is the server's abuse limits (README, "Security"): token
// buckets on writes and on every other request, per key, per user and per
// org, and caps on keys, event streams and org entry caps.
type LimitsConfig struct {
	// WriteRate and WriteBurst shape each key's bucket on memory writes;
	// a rate of 0 turns every write limit off.
	WriteRate  float64
	WriteBurst int
	// UserWrite and OrgWrite are the write buckets all keys of one user,
	// and of one org, share.
	UserWrite, OrgWrite httpapi.RateLimit
	// Read, UserRead and OrgRead are the buckets of every other
	// authenticated request; a Read rate of 0 turns every read limit off.
	Read, UserRead, OrgRead httpapi.RateLimit
	// MaxKeysPerUser caps a user's active keys (0: no cap).
	MaxKeysPerUser int
	// MaxStreamsPerKey caps one key's open event streams per replica (0: no cap).
	MaxStreamsPerKey int
	// MaxEntriesCeiling is the highest max_entries an org may set.
	MaxEntriesCeiling int
	// MaxStoresPerOrg caps the memory stores an org may create through
	// the memory stores API, at most teammem.MaxStoresPerOrgCeiling.
	MaxStoresPerOrg int
}

// limitsEnv lists the variables loadEnv reads, for envVars.
var limitsEnv = []string{
	"TEAMMEM_WRITE_RATE", "TEAMMEM_WRITE_BURST", "TEAMMEM_USER_WRITE_RATE", "TEAMMEM_USER_WRITE_BURST",
	"TEAMMEM_ORG_WRITE_RATE", "TEAMMEM_ORG_WRITE_BURST", "TEAMMEM_READ_RATE", "TEAMMEM_READ_BURST",
	"TEAMMEM_USER_READ_RATE", "TEAMMEM_USER_READ_BURST", "TEAMMEM_ORG_READ_RATE", "TEAMMEM_ORG_READ_BURST",
	"TEAMMEM_MAX_KEYS_PER_USER", "TEAMMEM_MAX_STREAMS_PER_KEY", "TEAMMEM_MAX_ENTRIES_CEILING",
	"TEAMMEM_MAX_STORES_PER_ORG",
}

// defaultLimits are the built-in limits. One user gets what one key gets,
// however many keys they mint; an org gets ten users' worth. Reads are ten
// times writes: a pull is cheap, and clients poll.
func defaultLimits() LimitsConfig {
	return LimitsConfig{
		WriteRate: 10, WriteBurst: 30,
		UserWrite:      httpapi.RateLimit{Rate: 10, Burst: 30},
		OrgWrite:       httpapi.RateLimit{Rate: 100, Burst: 300},
		Read:           httpapi.RateLimit{Rate: 100, Burst: 300},
		UserRead:       httpapi.RateLimit{Rate: 100, Burst: 300},
		OrgRead:        httpapi.RateLimit{Rate: 1000, Burst: 3000},
		MaxKeysPerUser: 20, MaxStreamsPerKey: 4, MaxEntriesCeiling: 5000,
		MaxStoresPerOrg: teammem.DefaultMaxStoresPerOrg,
	}
}

// loadEnv overlays the limit variables on l, recording malformed values in
// e.
func (l *LimitsConfig) loadEnv(e *envReader) {
	bucket := func(prefix string, dst *httpapi.RateLimit) {
		e.number(prefix+"_RATE", &dst.Rate)
		e.integer(prefix+"_BURST", &dst.Burst)
	}
	e.number("TEAMMEM_WRITE_RATE", &l.WriteRate)
	e.integer("TEAMMEM_WRITE_BURST", &l.WriteBurst)
	bucket("TEAMMEM_USER_WRITE", &l.UserWrite)
	bucket("TEAMMEM_ORG_WRITE", &l.OrgWrite)
	bucket("TEAMMEM_READ", &l.Read)
	bucket("TEAMMEM_USER_READ", &l.UserRead)
	bucket("TEAMMEM_ORG_READ", &l.OrgRead)
	e.integer("TEAMMEM_MAX_KEYS_PER_USER", &l.MaxKeysPerUser)
	e.integer("TEAMMEM_MAX_STREAMS_PER_KEY", &l.MaxStreamsPerKey)
	e.integer("TEAMMEM_MAX_ENTRIES_CEILING", &l.MaxEntriesCeiling)
	e.integer("TEAMMEM_MAX_STORES_PER_ORG", &l.MaxStoresPerOrg)
}

// bindFlags registers the flags of the limits most often changed; the
// per-user and per-org buckets are set by their variables only.
func (l *LimitsConfig) bindFlags(fs *pflag.FlagSet) {
	fs.Float64Var(&l.WriteRate, "write-rate", l.WriteRate, "writes per second per API key before 429; 0 turns every write limit off (TEAMMEM_WRITE_RATE)")
	fs.IntVar(&l.WriteBurst, "write-burst", l.WriteBurst, "writes a key may burst above the rate (TEAMMEM_WRITE_BURST)")
	fs.Float64Var(&l.Read.Rate, "read-rate", l.Read.Rate, "other requests per second per API key before 429; 0 turns every read limit off (TEAMMEM_READ_RATE)")
	fs.IntVar(&l.Read.Burst, "read-burst", l.Read.Burst, "requests a key may burst above the read rate (TEAMMEM_READ_BURST)")
	fs.IntVar(&l.MaxKeysPerUser, "max-keys-per-user", l.MaxKeysPerUser, "active API keys a user may hold; 0 for no cap (TEAMMEM_MAX_KEYS_PER_USER)")
	fs.IntVar(&l.MaxStreamsPerKey, "max-streams-per-key", l.MaxStreamsPerKey, "open event streams per API key and replica; 0 for no cap (TEAMMEM_MAX_STREAMS_PER_KEY)")
	fs.IntVar(&l.MaxEntriesCeiling, "max-entries-ceiling", l.MaxEntriesCeiling, "the highest max_entries an org may set (TEAMMEM_MAX_ENTRIES_CEILING)")
	fs.IntVar(&l.MaxStoresPerOrg, "max-stores-per-org", l.MaxStoresPerOrg,
		fmt.Sprintf("memory stores an org may create through the memory stores API, 1 to %d (TEAMMEM_MAX_STORES_PER_ORG)", teammem.MaxStoresPerOrgCeiling))
}

// validate appends to errs what is wrong with l, naming the variable;
// defaultMaxEntries is TEAMMEM_DEFAULT_MAX_ENTRIES, which the ceiling bounds.
func (l LimitsConfig) validate(defaultMaxEntries int, errs *[]string) {
	if l.WriteRate < 0 || l.WriteBurst < 1 {
		*errs = append(*errs, "TEAMMEM_WRITE_RATE must be >= 0 and TEAMMEM_WRITE_BURST >= 1")
	}
	for prefix, b := range map[string]httpapi.RateLimit{"TEAMMEM_USER_WRITE": l.UserWrite, "TEAMMEM_ORG_WRITE": l.OrgWrite,
		"TEAMMEM_READ": l.Read, "TEAMMEM_USER_READ": l.UserRead, "TEAMMEM_ORG_READ": l.OrgRead} {
		if b.Rate < 0 || b.Burst < 1 {
			*errs = append(*errs, fmt.Sprintf("%s_RATE must be >= 0 and %s_BURST >= 1", prefix, prefix))
		}
	}
	if l.MaxKeysPerUser < 0 {
		*errs = append(*errs, "TEAMMEM_MAX_KEYS_PER_USER must be >= 0 (0: no cap)")
	}
	if l.MaxStreamsPerKey < 0 {
		*errs = append(*errs, "TEAMMEM_MAX_STREAMS_PER_KEY must be >= 0 (0: no cap)")
	}
	if l.MaxStoresPerOrg < 1 || l.MaxStoresPerOrg > teammem.MaxStoresPerOrgCeiling {
		*errs = append(*errs, fmt.Sprintf("TEAMMEM_MAX_STORES_PER_ORG must be between 1 and %d", teammem.MaxStoresPerOrgCeiling))
	}
	if l.MaxEntriesCeiling < 1 {
		*errs = append(*errs, "TEAMMEM_MAX_ENTRIES_CEILING must be at least 1")
	} else if defaultMaxEntries > l.MaxEntriesCeiling {
		*errs = append(*errs, fmt.Sprintf("TEAMMEM_DEFAULT_MAX_ENTRIES (%d) must not exceed TEAMMEM_MAX_ENTRIES_CEILING (%d)",
			defaultMaxEntries, l.MaxEntriesCeiling))
	}
}

// apply sets the limits of an httpapi configuration.
func (l LimitsConfig) apply(c *httpapi.Config) {
	c.WriteRate, c.WriteBurst = l.WriteRate, l.WriteBurst
	c.UserWrite, c.OrgWrite = l.UserWrite, l.OrgWrite
	c.Read, c.UserRead, c.OrgRead = l.Read, l.UserRead, l.OrgRead
	c.MaxKeysPerUser, c.MaxStreamsPerKey = l.MaxKeysPerUser, l.MaxStreamsPerKey
	c.MaxStoresPerOrg = l.MaxStoresPerOrg
}

// String prints the limits for the start-up log.
func (l LimitsConfig) String() string {
	b := func(r httpapi.RateLimit) string { return fmt.Sprintf("%g/%d", r.Rate, r.Burst) }
	return fmt.Sprintf("write_rate=%g write_burst=%d user_write=%s org_write=%s read=%s user_read=%s org_read=%s max_keys_per_user=%d max_streams_per_key=%d max_entries_ceiling=%d max_stores_per_org=%d",
		l.WriteRate, l.WriteBurst, b(l.UserWrite), b(l.OrgWrite), b(l.Read), b(l.UserRead), b(l.OrgRead),
		l.MaxKeysPerUser, l.MaxStreamsPerKey, l.MaxEntriesCeiling, l.MaxStoresPerOrg)
}
