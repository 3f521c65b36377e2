package httpapi

import (
	"github.com/teammem/teammem/internal/teammem"
)

// action is something a caller may be allowed to do. Every handler asks
// authorize before acting, so the roles table below is the one place where
// permissions live.
type action string

// The actions.
const (
	actTeamRead      action = "team.read"      // pull, history, export, MEMORY.md, events of the team space
	actTeamWrite     action = "team.write"     // push, delete, batch to the team space
	actTeamModerate  action = "team.moderate"  // restore team entries, redact their history, delete a repo's team memory
	actPersonalRead  action = "personal.read"  // the caller's own personal space
	actPersonalWrite action = "personal.write" // the caller's own personal space
	actOrgRead       action = "org.read"       // org settings and limits, repo list
	actOrgWrite      action = "org.write"      // change org settings
	actUsersRead     action = "users.read"     // list users
	actUsersWrite    action = "users.write"    // create users, change roles, disable
	actKeysOwn       action = "keys.own"       // list, create and revoke one's own keys
	actKeysAll       action = "keys.all"       // every key of the org
	actAuditRead     action = "audit.read"     // the audit log
	actTelemetry     action = "telemetry"      // send client telemetry
)

// rolePolicy is the roles table: the weakest role allowed each action, and
// whether the action changes state (refused to read-only keys).
var rolePolicy = map[action]struct {
	min    teammem.Role
	writes bool
}{
	actTeamRead:      {teammem.RoleViewer, false},
	actTeamWrite:     {teammem.RoleMember, true},
	actTeamModerate:  {teammem.RoleAdmin, true},
	actPersonalRead:  {teammem.RoleMember, false},
	actPersonalWrite: {teammem.RoleMember, true},
	actOrgRead:       {teammem.RoleViewer, false},
	actOrgWrite:      {teammem.RoleAdmin, true},
	actUsersRead:     {teammem.RoleAdmin, false},
	actUsersWrite:    {teammem.RoleAdmin, true},
	actKeysOwn:       {teammem.RoleViewer, false},
	actKeysAll:       {teammem.RoleAdmin, false},
	actAuditRead:     {teammem.RoleAdmin, false},
	actTelemetry:     {teammem.RoleViewer, false},
}

// authorize reports, as EForbidden, why p may not do a; nil when it may.
// write says whether this use of the action changes state (for actions like
// keys.own that cover both reading and writing).
func authorize(p teammem.Principal, a action, write bool) error {
	rule, ok := rolePolicy[a]
	if !ok {
		return teammem.Errorf(teammem.EInternal, "no policy for action %s", a)
	}
	if !p.User.Role.AtLeast(rule.min) {
		return teammem.Errorf(teammem.EForbidden, "role %s may not %s (needs %s or above)", p.User.Role, a, rule.min)
	}
	if (rule.writes || write) && p.Key.ReadOnly {
		return teammem.Errorf(teammem.EForbidden, "the API key is read-only")
	}
	return nil
}

// canManageRole reports whether p may grant or change a user holding role r:
// only owners touch owners and admins; admins manage members and viewers.
func canManageRole(p teammem.Principal, r teammem.Role) bool {
	if p.User.Role == teammem.RoleOwner {
		return true
	}
	return p.User.Role == teammem.RoleAdmin && (r == teammem.RoleMember || r == teammem.RoleViewer)
}
