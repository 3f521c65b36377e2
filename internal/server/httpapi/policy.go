package httpapi

import "github.com/teammem/teammem/internal/teammem"

// action is teammem.Action: the roles table lives in the domain package,
// where the Writer asks it too.
type action = teammem.Action

// The actions, as the handlers name them.
const (
	actTeamRead      = teammem.ActTeamRead
	actTeamWrite     = teammem.ActTeamWrite
	actTeamModerate  = teammem.ActTeamModerate
	actPersonalRead  = teammem.ActPersonalRead
	actPersonalWrite = teammem.ActPersonalWrite
	actOrgRead       = teammem.ActOrgRead
	actOrgWrite      = teammem.ActOrgWrite
	actUsersRead     = teammem.ActUsersRead
	actUsersWrite    = teammem.ActUsersWrite
	actKeysOwn       = teammem.ActKeysOwn
	actKeysAll       = teammem.ActKeysAll
	actAuditRead     = teammem.ActAuditRead
	actTelemetry     = teammem.ActTelemetry
	actTeamReview    = teammem.ActTeamReview
)

// authorize is teammem.Authorize.
func authorize(p teammem.Principal, a action, write bool) error {
	return teammem.Authorize(p, a, write)
}

// canManageRole is teammem.CanManageRole.
func canManageRole(p teammem.Principal, r teammem.Role) bool { return teammem.CanManageRole(p, r) }
