package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Memory modes. In the long-running mode (Claude Code's assistant or
// "KAIROS" mode, reference §2.11) extraction appends to the day's log
// instead of editing topic files and MEMORY.md, and a nightly dream
// distils the logs.
const (
	modeTopics = "topics"
	modeLog    = "log"
)

// envMemoryMode chooses the mode; it overrides the settings file.
const envMemoryMode = "TEAMMEM_MEMORY_MODE"

// settingsFileName is teammem's own settings file in its config dir;
// only `teammem config` writes it, one key at a time, keeping the others
// (login rewrites config.json).
const settingsFileName = "settings.json"

// memoryModeSetting is the mode in effect and what chose it.
type memoryModeSetting struct {
	Mode   string `json:"mode"`
	Source string `json:"source"`
	// Err reports an invalid value; Mode is then modeTopics.
	Err error `json:"-"`
}

// memoryMode reads TEAMMEM_MEMORY_MODE, then "memory_mode" in
// <user config dir>/teammem/settings.json, else topics.
func (a *app) memoryMode() memoryModeSetting {
	parse := func(v, source string) memoryModeSetting {
		switch m := strings.ToLower(strings.TrimSpace(v)); m {
		case modeTopics, modeLog:
			return memoryModeSetting{Mode: m, Source: source}
		}
		return memoryModeSetting{Mode: modeTopics, Source: source,
			Err: fmt.Errorf("%s: memory mode %q: want %s or %s", source, v, modeTopics, modeLog)}
	}
	if v := a.getenv(envMemoryMode); strings.TrimSpace(v) != "" {
		return parse(v, envMemoryMode)
	}
	if d, err := a.configDir(); err == nil {
		file := filepath.Join(d, "teammem", settingsFileName)
		if b, err := os.ReadFile(file); err == nil {
			var s struct {
				MemoryMode string `json:"memory_mode"`
			}
			if err := json.Unmarshal(b, &s); err != nil {
				return memoryModeSetting{Mode: modeTopics, Source: file, Err: fmt.Errorf("%s is not valid JSON: %v", file, err)}
			}
			if s.MemoryMode != "" {
				return parse(s.MemoryMode, file)
			}
		}
	}
	return memoryModeSetting{Mode: modeTopics, Source: "default"}
}
