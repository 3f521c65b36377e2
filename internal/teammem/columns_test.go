package teammem

import (
	"testing"
	"time"
)

// TestColumnsRoundTrip: what the drivers store reads back as written, and
// the empty forms read back as the values the domain expects of them.
func TestColumnsRoundTrip(t *testing.T) {
	if s, _ := EncodeAuditDetails(nil); s != "{}" {
		t.Errorf("no details are stored as %q, want {}", s)
	}
	if d, err := DecodeAuditDetails("{}"); err != nil || d != nil {
		t.Errorf("{} decodes to %v, %v; want nil", d, err)
	}
	text, _ := EncodeAuditDetails(map[string]any{"n": 2.0})
	if d, err := DecodeAuditDetails(text); err != nil || d["n"] != 2.0 {
		t.Errorf("details decode to %v, %v", d, err)
	}
	if s, _ := EncodeStoreMetadata(nil); s != "{}" {
		t.Errorf("no metadata is stored as %q, want {}", s)
	}
	if m, err := DecodeStoreMetadata(""); err != nil || m != nil {
		t.Errorf("a repo space's metadata decodes to %v, %v; want nil", m, err)
	}
	if _, err := DecodeOrgSettings(7, "not json"); err == nil {
		t.Error("unreadable settings decoded")
	}
	var p Proposal
	changes, _ := EncodeProposalChanges([]ProposedChange{{Key: "a.md", Redacted: true}})
	if err := DecodeProposalColumns(&p, changes, ""); err != nil || !p.Redacted || len(p.Changes) != 1 || p.Findings != nil {
		t.Errorf("proposal columns decode to %+v, %v", p, err)
	}
	repo, created, updated := time.Unix(1, 0), time.Unix(2, 0), time.Unix(3, 0)
	if c, u := StoreTimes(repo, nil, nil); !c.Equal(repo) || !u.Equal(repo) {
		t.Errorf("a repo space's times are %v, %v; want its repo's creation", c, u)
	}
	if c, u := StoreTimes(repo, &created, &updated); !c.Equal(created) || !u.Equal(updated) {
		t.Errorf("a store's times are %v, %v; want its own", c, u)
	}
	if MigrationsClean(3, false) != nil || ErrorCode(MigrationsClean(3, true)) != EUnavailable {
		t.Error("a dirty migration must make the store unavailable, a clean one not")
	}
}

// TestLastOwnerRule: only a change that takes an active owner out of the
// owners needs another active owner, and is refused without one.
func TestLastOwnerRule(t *testing.T) {
	member, yes, no := RoleMember, true, false
	owner := User{ID: 1, Handle: "ann", Role: RoleOwner}
	for _, c := range []struct {
		name    string
		target  User
		p       UserUpdateParams
		removes bool
	}{
		{"demote", owner, UserUpdateParams{Role: &member}, true},
		{"disable", owner, UserUpdateParams{Disabled: &yes}, true},
		{"enable", owner, UserUpdateParams{Disabled: &no}, false},
		{"a member", User{ID: 2, Role: RoleMember}, UserUpdateParams{Disabled: &yes}, false},
		{"a disabled owner", User{ID: 3, Role: RoleOwner, Disabled: true}, UserUpdateParams{Role: &member}, false},
	} {
		if got := c.p.RemovesOwner(c.target); got != c.removes {
			t.Errorf("%s: RemovesOwner = %v, want %v", c.name, got, c.removes)
		}
	}
	users := []User{owner, {ID: 2, Role: RoleOwner, Disabled: true}, {ID: 3, Role: RoleAdmin}}
	if n := ActiveOwners(users, owner.ID); n != 0 {
		t.Errorf("other active owners = %d, want 0", n)
	}
	if ErrorCode(OwnerKept(owner, 0)) != EConflict || OwnerKept(owner, 1) != nil {
		t.Error("the last active owner must be kept, and only the last")
	}
}
