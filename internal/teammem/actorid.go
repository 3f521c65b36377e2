package teammem

import (
	"strconv"
	"strings"
)

// Actor ids of the memory stores API. The SDKs document an api_actor's
// api_key_id as an "apikey_…" id and a user_actor's user_id as a "user_…"
// id. They are mapped from the ids teammem already has, so they never
// change and need no column of their own: a key's UUID without its dashes,
// a user's row id in decimal. The admin API takes them wherever it takes a
// key id or a user handle.
const (
	APIKeyActorPrefix = "apikey_"
	UserActorPrefix   = "user_"
)

// APIKeyActorID is the api_key_id of an api_actor for the key with id
// keyID (a UUID); "" for "".
func APIKeyActorID(keyID string) string {
	if keyID == "" {
		return ""
	}
	return APIKeyActorPrefix + strings.ReplaceAll(keyID, "-", "")
}

// KeyIDOf returns the key id that id names: an "apikey_…" actor id turned
// back into its UUID, anything else unchanged (a key id as the admin API
// has always listed it).
func KeyIDOf(id string) string {
	hex, ok := strings.CutPrefix(id, APIKeyActorPrefix)
	if !ok || len(hex) != 32 || strings.Trim(strings.ToLower(hex), "0123456789abcdef") != "" {
		return id
	}
	hex = strings.ToLower(hex)
	return hex[:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:]
}

// UserActorID is the user_id of a user_actor for the user with row id
// userID; "" when the user is unknown (0).
func UserActorID(userID int64) string {
	if userID == 0 {
		return ""
	}
	return UserActorPrefix + strconv.FormatInt(userID, 10)
}

// UserIDOf returns the user row id a "user_…" actor id names, and whether
// id is one.
func UserIDOf(id string) (int64, bool) {
	n, ok := strings.CutPrefix(id, UserActorPrefix)
	if !ok || n == "" || n[0] == '0' {
		return 0, false
	}
	v, err := strconv.ParseInt(n, 10, 64)
	if err != nil || v <= 0 {
		return 0, false
	}
	return v, true
}
