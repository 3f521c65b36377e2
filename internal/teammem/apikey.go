package teammem

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"time"
)

// APIKey is a credential of one user. Its secret is never stored: only a
// display prefix and the SHA-256 of the whole key string.
type APIKey struct {
	ID         string     `json:"id"`
	OrgID      int64      `json:"-"`
	UserID     int64      `json:"-"`
	UserHandle string     `json:"user"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	ReadOnly   bool       `json:"read_only"`
	ExpiresAt  *time.Time `json:"expires_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	CreatedAt  time.Time  `json:"created_at"`
}

// Usable reports whether the key may authenticate at time now.
func (k APIKey) Usable(now time.Time) bool {
	return k.RevokedAt == nil && (k.ExpiresAt == nil || now.Before(*k.ExpiresAt))
}

// TooManyKeys is the EConflict (409) of a key create refused because its
// user already holds max active keys: revoking one makes room.
func TooManyKeys(max int) error {
	return Errorf(EConflict, "the user already has %d active keys, the most allowed (TEAMMEM_MAX_KEYS_PER_USER); revoke one first", max).
		WithReason(ReasonTooManyKeys).WithDetails(map[string]any{"max_keys_per_user": max})
}

// MinKeyLength is the shortest key string accepted, for generated keys and
// for TEAMMEM_BOOTSTRAP_KEY alike.
const MinKeyLength = 32

var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewKeyString returns a fresh random key "tmk_<prefix>_<secret>" and its
// prefix. The prefix is shown in listings; the whole string only once.
func NewKeyString() (key, prefix string) {
	var b [30]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // unreachable on supported platforms
	}
	s := keyEncoding.EncodeToString(b[:])
	prefix = s[:8]
	return "tmk_" + prefix + "_" + s[8:], prefix
}

// KeyPrefix returns the display prefix of a key string: the <prefix> part of
// a "tmk_" key, else its first 8 characters.
func KeyPrefix(key string) string {
	if rest, ok := strings.CutPrefix(key, "tmk_"); ok {
		if p, _, ok := strings.Cut(rest, "_"); ok && p != "" {
			return p
		}
	}
	if len(key) > 8 {
		return key[:8]
	}
	return key
}

// HashKey returns the SHA-256 of a key string, the only form stored.
func HashKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// Principal is an authenticated caller: the key's org, user and the key.
type Principal struct {
	Org  Org
	User User
	Key  APIKey
}
