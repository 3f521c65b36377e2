package ccsettings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// newHookGroup is the matcher group install adds to each event. The empty
// matcher matches every SessionStart source and SessionEnd reason (Stop
// has no matcher and ignores it).
type newHookGroup struct {
	Matcher string         `json:"matcher"`
	Hooks   []newHookEntry `json:"hooks"`
}

// newHookEntry is Claude Code's command hook: sh runs Command with the
// event's JSON on stdin, and kills it after Timeout seconds.
type newHookEntry struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// installHooks returns settings data with one group running command in
// each of events, unless an entry with exactly that command is there.
// Other teammem entries (another path or other flags), and teammem entries
// of Events not in events, are removed and counted. changed reports
// whether out differs from data; data nil means no file yet.
func installHooks(data []byte, command string, events []string) (out []byte, removed int, changed bool, err error) {
	top, hooks, err := parseSettings(data)
	if err != nil {
		return nil, 0, false, err
	}
	for _, event := range Events {
		if slices.Contains(events, event) {
			continue
		}
		groups, err := eventGroups(hooks, event)
		if err != nil {
			continue // not ours to judge
		}
		kept, _, n := pruneHooks(groups, command, false)
		if n == 0 {
			continue
		}
		removed, changed = removed+n, true
		if len(kept) == 0 {
			hooks.del(event)
		} else {
			hooks.set(event, marshalNoEscape(kept))
		}
	}
	for _, event := range events {
		groups, err := eventGroups(hooks, event)
		if err != nil {
			return nil, 0, false, err
		}
		kept, found, n := pruneHooks(groups, command, true)
		removed += n
		if found && n == 0 {
			continue
		}
		if !found {
			kept = append(kept, marshalNoEscape(newHookGroup{Hooks: []newHookEntry{{Type: "command", Command: command, Timeout: EntryTimeout}}}))
		}
		hooks.set(event, marshalNoEscape(kept))
		changed = true
	}
	if !changed {
		return data, 0, false, nil
	}
	top.set("hooks", marshalNoEscape(hooks))
	return append(marshalNoEscape(top), '\n'), removed, true, nil
}

// uninstallHooks returns settings data without any teammem hook entry
// (command, or any other "<path>/teammem hook") in any event, dropping the
// groups and events that leaves empty and the "hooks" key if nothing is
// left in it. removed counts the entries.
func uninstallHooks(data []byte, command string) (out []byte, removed int, err error) {
	top, hooks, err := parseSettings(data)
	if err != nil {
		return nil, 0, err
	}
	for _, event := range append([]string(nil), hooks.keys...) {
		groups, err := eventGroups(hooks, event)
		if err != nil {
			continue // not ours to judge: an event we never write, left as it is
		}
		kept, _, n := pruneHooks(groups, command, false)
		if n == 0 {
			continue
		}
		removed += n
		if len(kept) == 0 {
			hooks.del(event)
		} else {
			hooks.set(event, marshalNoEscape(kept))
		}
	}
	if removed == 0 {
		return data, 0, nil
	}
	if len(hooks.keys) == 0 {
		top.del("hooks")
	} else {
		top.set("hooks", marshalNoEscape(hooks))
	}
	return append(marshalNoEscape(top), '\n'), removed, nil
}

// parseSettings parses a settings file into its top-level object and its
// "hooks" object (empty when absent or null). Empty data is an empty file.
func parseSettings(data []byte) (top, hooks *object, err error) {
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}")
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, nil, fmt.Errorf("not valid JSON (line %d, column %d: %v)", line, col, se)
		}
		return nil, nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if top, err = parseObject(data); err != nil {
		return nil, nil, errors.New("not a JSON object")
	}
	hooks = &object{vals: map[string]json.RawMessage{}}
	if raw, ok := top.get("hooks"); ok && string(raw) != "null" {
		if hooks, err = parseObject(raw); err != nil {
			return nil, nil, errors.New(`"hooks" is not a JSON object`)
		}
	}
	return top, hooks, nil
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, offset int64) (line, col int) {
	before := data[:min(int(offset), len(data))]
	line = bytes.Count(before, []byte("\n")) + 1
	return line, len(before) - bytes.LastIndexByte(before, '\n') - 1 // Offset is just past the bad byte
}

// eventGroups returns the matcher groups of an event: none when absent or
// null, an error when the value is not an array.
func eventGroups(hooks *object, event string) ([]json.RawMessage, error) {
	raw, ok := hooks.get(event)
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var groups []json.RawMessage
	if err := json.Unmarshal(raw, &groups); err != nil {
		return nil, fmt.Errorf(`"hooks.%s" is not a JSON array`, event)
	}
	return groups, nil
}

// pruneHooks removes teammem entries from an event's groups. With keep, the
// first entry whose command is exactly ours stays (found reports it). A
// group left with no hooks is dropped; groups and entries that are not
// ours, including ones that do not parse, stay byte for byte.
func pruneHooks(groups []json.RawMessage, ours string, keep bool) (out []json.RawMessage, found bool, removed int) {
	for _, raw := range groups {
		g, err := parseObject(raw)
		var entries []json.RawMessage
		if err == nil {
			hooksRaw, _ := g.get("hooks")
			err = json.Unmarshal(hooksRaw, &entries)
		}
		if err != nil {
			out = append(out, raw)
			continue
		}
		var left []json.RawMessage
		for _, e := range entries {
			var h struct{ Type, Command string }
			if json.Unmarshal(e, &h) != nil || h.Type != "command" || !IsTeammemHook(h.Command, ours) {
				left = append(left, e)
			} else if keep && !found && strings.TrimSpace(h.Command) == ours {
				found = true
				left = append(left, e)
			} else {
				removed++
			}
		}
		switch {
		case len(left) == len(entries):
			out = append(out, raw)
		case len(left) > 0:
			g.set("hooks", marshalNoEscape(left))
			out = append(out, marshalNoEscape(g))
		}
	}
	return out, found, removed
}
