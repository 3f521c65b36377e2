package teammem

// Action is something a caller may be allowed to do. Every handler and the
// Writer ask Authorize before acting, so RolePolicy is the one place where
// permissions live.
type Action string

// The actions.
const (
	ActTeamRead      Action = "team.read"      // pull, history, export, MEMORY.md, events of the team space
	ActTeamWrite     Action = "team.write"     // push, delete, batch to the team space
	ActTeamModerate  Action = "team.moderate"  // restore team entries, redact their history, delete a repo's team memory
	ActPersonalRead  Action = "personal.read"  // the caller's own personal space
	ActPersonalWrite Action = "personal.write" // the caller's own personal space
	ActOrgRead       Action = "org.read"       // org settings and limits, repo list
	ActOrgWrite      Action = "org.write"      // change org settings
	ActUsersRead     Action = "users.read"     // list users
	ActUsersWrite    Action = "users.write"    // create users, change roles, disable
	ActKeysOwn       Action = "keys.own"       // list, create and revoke one's own keys
	ActKeysAll       Action = "keys.all"       // every key of the org
	ActAuditRead     Action = "audit.read"     // the audit log
	ActTelemetry     Action = "telemetry"      // send client telemetry
	ActTeamReview    Action = "team.review"    // list every proposal, approve or reject them
)

// Reasons a key is refused with EForbidden, in the error's details
// ("reason"), so a client can say why without reading the message.
const (
	ForbiddenReadOnly     = "read_only_key" // the key may only read and the request writes
	ForbiddenRole         = "role"          // the user's role is below what the action needs
	ForbiddenUserDisabled = "user_disabled" // the key's user is disabled
	ForbiddenOrgDisabled  = "org_disabled"  // the key's organization is disabled
)

// RolePolicy is the roles table: the weakest role allowed each action, and
// whether the action changes state (refused to read-only keys).
var RolePolicy = map[Action]struct {
	Min    Role
	Writes bool
}{
	ActTeamRead:      {RoleViewer, false},
	ActTeamWrite:     {RoleMember, true},
	ActTeamModerate:  {RoleAdmin, true},
	ActPersonalRead:  {RoleMember, false},
	ActPersonalWrite: {RoleMember, true},
	ActOrgRead:       {RoleViewer, false},
	ActOrgWrite:      {RoleAdmin, true},
	ActUsersRead:     {RoleAdmin, false},
	ActUsersWrite:    {RoleAdmin, true},
	ActKeysOwn:       {RoleViewer, false},
	ActKeysAll:       {RoleAdmin, false},
	ActAuditRead:     {RoleAdmin, false},
	ActTelemetry:     {RoleViewer, false},
	ActTeamReview:    {RoleAdmin, true},
}

// Authorize reports, as EForbidden, why p may not do a; nil when it may.
// write says whether this use of the action changes state (for actions like
// keys.own that cover both reading and writing).
func Authorize(p Principal, a Action, write bool) error {
	rule, ok := RolePolicy[a]
	if !ok {
		return Errorf(EInternal, "no policy for action %s", a)
	}
	if !p.User.Role.AtLeast(rule.Min) {
		return Errorf(EForbidden, "role %s may not %s (needs %s or above)", p.User.Role, a, rule.Min).
			WithDetails(map[string]any{"reason": ForbiddenRole, "role": p.User.Role, "needs": rule.Min, "action": string(a)})
	}
	if (rule.Writes || write) && p.Key.ReadOnly {
		return Errorf(EForbidden, "the API key is read-only").WithDetails(map[string]any{"reason": ForbiddenReadOnly})
	}
	return nil
}

// ScopeAction is the action reading (write false) or writing a space of
// scope needs.
func ScopeAction(scope Scope, write bool) Action {
	switch {
	case scope == ScopeTeam && write:
		return ActTeamWrite
	case scope == ScopeTeam:
		return ActTeamRead
	case write:
		return ActPersonalWrite
	default:
		return ActPersonalRead
	}
}

// CanManageRole reports whether p may grant or change a user holding role
// r: only owners touch owners and admins; admins manage members and viewers.
func CanManageRole(p Principal, r Role) bool {
	if p.User.Role == RoleOwner {
		return true
	}
	return p.User.Role == RoleAdmin && (r == RoleMember || r == RoleViewer)
}
