package mcprelay

import (
	"encoding/json"
	"strings"

	"github.com/teammem/teammem/internal/teammem"
)

// writeTools are the tools that change memory: their success makes the
// relay pull what they wrote.
var writeTools = map[string]bool{"create": true, "str_replace": true, "insert": true, "delete": true, "rename": true}

// noteWrite remembers a write tool call by its id, with the scopes its
// paths name (both for a rename), until its answer comes; and an
// initialize, whose answer carries the protocol version.
func (r *Relay) noteWrite(m message) {
	if len(m.ID) == 0 {
		return
	}
	switch m.Method {
	case "initialize":
		r.mu.Lock()
		r.writes[string(m.ID)] = nil
		r.mu.Unlock()
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		}
		if json.Unmarshal(m.Params, &p) != nil || !writeTools[p.Name] {
			return
		}
		var scopes []teammem.Scope
		for _, k := range []string{"path", "old_path", "new_path"} {
			path, _ := p.Arguments[k].(string)
			if s, ok := ScopeOf(path); ok && !hasScope(scopes, s) {
				scopes = append(scopes, s)
			}
		}
		if len(scopes) == 0 {
			return
		}
		r.mu.Lock()
		r.writes[string(m.ID)] = scopes
		r.mu.Unlock()
	}
}

// answered looks at an answer from the server: an initialize's result
// gives the protocol version later requests carry; a write's successful
// result queues the pull of its scopes.
func (r *Relay) answered(m message) {
	r.mu.Lock()
	scopes, ok := r.writes[string(m.ID)]
	delete(r.writes, string(m.ID))
	r.mu.Unlock()
	if !ok || len(m.Error) > 0 {
		return
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
		IsError         bool   `json:"isError"`
	}
	if json.Unmarshal(m.Result, &res) != nil {
		return
	}
	if scopes == nil {
		r.mu.Lock()
		r.version = res.ProtocolVersion
		r.mu.Unlock()
		return
	}
	if res.IsError || r.changes == nil {
		return
	}
	select {
	case r.changes <- scopes:
	default: // pulls are queued already; the next one takes this write too
	}
}

// ScopeOf returns the scope a memory tool path names: /memories/team/…
// or /memories/personal/….
func ScopeOf(path string) (teammem.Scope, bool) {
	rest, ok := strings.CutPrefix(path, "/memories/")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, "/")
	switch teammem.Scope(name) {
	case teammem.ScopeTeam:
		return teammem.ScopeTeam, true
	case teammem.ScopePersonal:
		return teammem.ScopePersonal, true
	}
	return "", false
}

func hasScope(ss []teammem.Scope, s teammem.Scope) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
