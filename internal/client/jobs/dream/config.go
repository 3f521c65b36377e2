package dream

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Defaults of Config, the reference's (§6.2, §6.4).
const (
	DefaultMinHours    = 24
	DefaultMinSessions = 5
	DefaultMaxTurns    = 30
)

// The environment variables LoadConfig reads. Error messages name them.
const (
	EnvEnabled     = "TEAMMEM_DREAM"
	EnvMinHours    = "TEAMMEM_DREAM_MIN_HOURS"
	EnvMinSessions = "TEAMMEM_DREAM_MIN_SESSIONS"
	EnvSubstantive = "TEAMMEM_DREAM_SUBSTANTIVE"
)

// Config tunes the gates and the run. It is a value: DefaultConfig, then
// LoadConfig's settings and environment, then the caller's flags.
type Config struct {
	// Enabled opens the first gate. DisabledBy says what closed it, for the
	// skip message: "TEAMMEM_DREAM=0" or "autoDreamEnabled in <file>".
	Enabled    bool
	DisabledBy string
	// MinHours is how long after the last consolidation the next may run;
	// fractions are allowed, 0 turns the time gate off.
	MinHours float64
	// MinSessions is how many sessions must have been touched since the last
	// consolidation, the current one not counted; 0 turns the gate off.
	MinSessions int
	// Substantive counts only sessions whose tool statistics show edits.
	Substantive bool
	// Force skips the time, throttle and session gates; never the lock.
	Force bool
	// DryRun runs on a copy of the memory directory and reports a diff.
	DryRun bool
	// MaxTurns bounds the model's turns; 0 means DefaultMaxTurns.
	MaxTurns int
}

// DefaultConfig returns the defaults: enabled, 24 hours, 5 sessions.
func DefaultConfig() Config {
	return Config{Enabled: true, MinHours: DefaultMinHours, MinSessions: DefaultMinSessions, MaxTurns: DefaultMaxTurns}
}

// LoadConfig returns DefaultConfig overlaid with the user's Claude Code
// settings (autoDreamEnabled in <configHome>/settings.json; configHome ""
// skips them) and then the TEAMMEM_DREAM* variables read through getenv.
// A malformed variable is an error naming it; an unreadable or malformed
// settings file is ignored, as Claude Code ignores it.
func LoadConfig(getenv func(string) string, configHome string) (Config, error) {
	c := DefaultConfig()
	if configHome != "" {
		file := filepath.Join(configHome, "settings.json")
		if on, defined := settingsEnabled(file); defined && !on {
			c.Enabled, c.DisabledBy = false, "autoDreamEnabled=false in "+file
		}
	}
	if v := strings.TrimSpace(getenv(EnvEnabled)); v != "" {
		on, err := parseBool(EnvEnabled, v)
		if err != nil {
			return Config{}, err
		}
		c.Enabled, c.DisabledBy = on, ""
		if !on {
			c.DisabledBy = EnvEnabled + "=" + v
		}
	}
	if v := strings.TrimSpace(getenv(EnvMinHours)); v != "" {
		h, err := ParseMinHours(v)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", EnvMinHours, err)
		}
		c.MinHours = h
	}
	if v := strings.TrimSpace(getenv(EnvMinSessions)); v != "" {
		n, err := ParseMinSessions(v)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %w", EnvMinSessions, err)
		}
		c.MinSessions = n
	}
	if v := strings.TrimSpace(getenv(EnvSubstantive)); v != "" {
		on, err := parseBool(EnvSubstantive, v)
		if err != nil {
			return Config{}, err
		}
		c.Substantive = on
	}
	return c, nil
}

// ParseMinHours parses a number of hours, fractions allowed, 0 or more.
func ParseMinHours(s string) (float64, error) {
	h, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(h) || math.IsInf(h, 0) || h < 0 {
		return 0, fmt.Errorf("%q: want a number of hours, 0 or more, such as 24 or 0.5", s)
	}
	return h, nil
}

// ParseMinSessions parses a whole number of sessions, 0 or more.
func ParseMinSessions(s string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a whole number of sessions, 0 or more", s)
	}
	return n, nil
}

// parseBool reads the reference's truthy (1, true, yes, on) and
// defined-falsy (0, false, no, off) values (§1.1); anything else is an
// error naming the variable.
func parseBool(name, v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%s=%q: want 1/true/yes/on or 0/false/no/off", name, v)
}

// settingsEnabled reads autoDreamEnabled from a Claude Code settings file
// and reports whether it is defined as a boolean.
func settingsEnabled(file string) (enabled, defined bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return false, false
	}
	var s struct {
		AutoDreamEnabled *bool `json:"autoDreamEnabled"`
	}
	if json.Unmarshal(b, &s) != nil || s.AutoDreamEnabled == nil {
		return false, false
	}
	return *s.AutoDreamEnabled, true
}
