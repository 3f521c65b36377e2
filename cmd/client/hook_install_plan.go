package main

import "fmt"

// hookFlagsSuffix is what install appends to the hook command for f, one
// of ccsettings.FlagSuffixes or nothing.
func hookFlagsSuffix(f settingsFlags) string {
	switch {
	case f.syncOnly:
		return " --sync-only"
	case f.engine == engineAlways:
		return " --engine always"
	}
	return ""
}

// installEvents returns the events a plan needs: the syncs' always, Stop
// when any part runs, PostToolUse and PreCompact when the notes do.
func installEvents(p enginePlan) []string {
	events := []string{"SessionStart"}
	if p.Extract.Run || p.Dream.Run || p.Notes.Run {
		events = append(events, "Stop")
	}
	events = append(events, "SessionEnd")
	if p.Notes.Run {
		events = append(events, "PostToolUse", "PreCompact")
	}
	return events
}

// printPlan says who runs each part and what that needs.
func (a *app) printPlan(o hookSettingsOutput) {
	if o.Plan == nil {
		return
	}
	w := a.stdout
	fmt.Fprintf(w, "  sync          teammem\n")
	for _, p := range []struct {
		name string
		pp   partPlan
	}{{"extraction", o.Plan.Extract}, {"session notes", o.Plan.Notes}, {"dream", o.Plan.Dream}} {
		fmt.Fprintf(w, "  %-13s %s: %s\n", p.name, p.pp.by(), p.pp.Why)
	}
	if o.NoModel != "" {
		fmt.Fprintf(w, "no model is configured here, so the hooks skip teammem's parts (no_model) until one is:\n  %s\n", o.NoModel)
	}
}
