package teammem

import (
	"context"
	"time"
)

// DreamErrorPermission is the error type of a dream stopped because its
// creator may no longer do what it does: the creator's key was revoked or
// expired, the user was disabled or removed, the org was disabled, or the
// user lost read on the input or write on the store the dream writes.
const DreamErrorPermission = "permission_error"

// DreamActor rebuilds, as it is now, the principal a dream runs as (its
// creator's org, user and key) and checks that it may still run the dream:
// read the input and write the store the dream writes (the input for
// update_existing; for create_new its output, an API store of the team
// scope). A dream created without a key (a nightly dream) is checked
// without one. It returns EForbidden, saying why, when the creator may not
// act any more; other errors are the store's. A worker asks it before
// every model turn and every write, so that nobody acts as a user after
// that user's say-so ended.
func DreamActor(ctx context.Context, st Store, d Dream, now time.Time) (Principal, error) {
	var p Principal
	org, err := st.OrgGet(ctx, d.OrgID)
	if err != nil {
		return p, err
	}
	user, err := st.UserGet(ctx, d.OrgID, d.CreatorUserID)
	switch {
	case ErrorCode(err) == ENotFound:
		return p, dreamForbidden("its creator was removed from the organization")
	case err != nil:
		return p, err
	}
	p = Principal{Org: org, User: user, Key: APIKey{OrgID: org.ID, UserID: user.ID, UserHandle: user.Handle}}
	if d.CreatorKeyID != "" {
		if p.Key, err = dreamKey(ctx, st, d, user.ID); err != nil {
			return p, err
		}
	}
	return p, dreamActorCheck(p, d, now)
}

// dreamKey finds the dream's creator key among the user's keys.
func dreamKey(ctx context.Context, st Store, d Dream, userID int64) (APIKey, error) {
	keys, err := st.KeyList(ctx, d.OrgID, KeyFilter{UserID: userID})
	if err != nil {
		return APIKey{}, err
	}
	for _, k := range keys {
		if k.ID == d.CreatorKeyID {
			return k, nil
		}
	}
	return APIKey{}, dreamForbidden("the API key that created it was deleted")
}

// dreamActorCheck is DreamActor's rule over the principal it rebuilt.
func dreamActorCheck(p Principal, d Dream, now time.Time) error {
	switch {
	case p.Org.Disabled:
		return dreamForbidden("the organization is disabled")
	case p.User.Disabled:
		return dreamForbidden("its creator's user is disabled")
	case d.CreatorKeyID != "" && p.Key.RevokedAt != nil:
		return dreamForbidden("the API key that created it was revoked")
	case d.CreatorKeyID != "" && p.Key.ExpiresAt != nil && !now.Before(*p.Key.ExpiresAt):
		return dreamForbidden("the API key that created it expired")
	case d.InputOwnerID != 0 && d.InputOwnerID != p.User.ID:
		return dreamForbidden("its creator may not read the input store")
	}
	input := ScopeTeam
	if d.InputOwnerID != 0 {
		input = ScopePersonal
	}
	target := input
	if d.Behavior == DreamCreateNew {
		target = ScopeTeam
	}
	if err := Authorize(p, ScopeAction(input, false), false); err != nil {
		return dreamForbidden("its creator may not read the input store any more: " + ErrorMessage(err))
	}
	if err := Authorize(p, ScopeAction(target, true), true); err != nil {
		return dreamForbidden("its creator may not write the store it writes any more: " + ErrorMessage(err))
	}
	return nil
}

// dreamForbidden is DreamActor's refusal: why the dream stopped.
func dreamForbidden(why string) error {
	return Errorf(EForbidden, "the dream stopped because %s; nothing more was written", why)
}
