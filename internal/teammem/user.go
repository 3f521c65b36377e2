package teammem

import (
	"regexp"
	"time"
)

// Role is what a user may do inside their org.
type Role string

// The roles, strongest first.
const (
	RoleOwner  Role = "owner"  // everything, including managing admins and owners
	RoleAdmin  Role = "admin"  // org settings, users, keys, audit, team memory moderation
	RoleMember Role = "member" // read and write team memory and their own personal space
	RoleViewer Role = "viewer" // read team memory only
)

var roleRank = map[Role]int{RoleViewer: 1, RoleMember: 2, RoleAdmin: 3, RoleOwner: 4}

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return roleRank[r] > 0 }

// AtLeast reports whether r is as strong as min or stronger.
func (r Role) AtLeast(min Role) bool { return roleRank[r] >= roleRank[min] && roleRank[r] > 0 }

// User is a person (or a bot) in an org.
type User struct {
	ID        int64     `json:"-"`
	OrgID     int64     `json:"-"`
	Handle    string    `json:"handle"`
	Role      Role      `json:"role"`
	Disabled  bool      `json:"disabled"`
	CreatedAt time.Time `json:"created_at"`
}

var handleRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,62}[A-Za-z0-9])?$`)

// ValidateHandle checks a user handle: letters, digits, '.', '_' and '-',
// starting and ending with a letter or digit, at most 64 characters.
func ValidateHandle(h string) error {
	if !handleRE.MatchString(h) {
		return Errorf(EInvalid, "user handle %q must be 1-64 letters, digits, '.', '_' or '-' (not at the ends)", h)
	}
	return nil
}

// ActiveOwner reports whether u counts as one of the org's owners: an org
// needs one, or nobody is left who may make another.
func (u User) ActiveOwner() bool { return u.Role == RoleOwner && !u.Disabled }

// RemovesOwner reports whether p would take target, an active owner, out of
// the org's active owners.
func (p UserUpdateParams) RemovesOwner(target User) bool {
	after := target
	if p.Role != nil {
		after.Role = *p.Role
	}
	if p.Disabled != nil {
		after.Disabled = *p.Disabled
	}
	return target.ActiveOwner() && !after.ActiveOwner()
}

// ActiveOwners counts the active owners among users other than the one
// with id except.
func ActiveOwners(users []User, except int64) int {
	n := 0
	for _, u := range users {
		if u.ID != except && u.ActiveOwner() {
			n++
		}
	}
	return n
}

// OwnerKept refuses (EConflict) a change to u that leaves the org with
// activeOwners active owners when that is none. A store holds it for
// UserUpdateParams.KeepOwner, counting in the same transaction as the
// update; the API checks it first, to answer before writing.
func OwnerKept(u User, activeOwners int) error {
	if activeOwners > 0 {
		return nil
	}
	return Errorf(EConflict, "%q is the organization's last active owner; make another user owner first", u.Handle)
}

// Actor identifies who makes a change, for entry authorship and the audit log.
type Actor struct {
	UserID   int64
	ClientID string // free-form client identifier (User-Agent or X-Teammem-Client), truncated
	// KeyID, API and SessionID are the provenance each version records:
	// the API key used, the dialect and the Claude Code session id (when
	// the client sent X-Claude-Code-Session-Id).
	KeyID     string
	API       string
	SessionID string
}
