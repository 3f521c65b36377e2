package teammem

import (
	"crypto/rand"
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Memory stores (design §4.5): every space is a store named "memstore_" +
// its UID, every entry a memory named by its MemoryID, every recorded
// version a version named "memver_" + its row id. A memory's path is "/" +
// the entry's key; its content_sha256 is the hex of the entry checksum.

// The id prefixes of the memory stores API.
const (
	StoreIDPrefix   = "memstore_"
	MemoryIDPrefix  = "mem_"
	VersionIDPrefix = "memver_"
	// storeRepoPrefix starts the slug of the hidden repo row of a store
	// created through the API: '@' is never valid in a repo slug, so no
	// repo route and no Claude Code request can name it.
	storeRepoPrefix = "@memstore/"
)

// The memory stores API's limits, stricter than an org's where they differ
// (reference §4.4, §7).
const (
	MaxMemoryBytes     = 102400
	MaxMemoryPathBytes = 1024
	MaxMemoryPathDepth = 20
)

var memoryIDRE = regexp.MustCompile(`^mem_[A-Za-z0-9_-]{1,120}$`)

// NewMemoryID returns a fresh random memory id.
func NewMemoryID() string { return MemoryIDPrefix + randomHex() }

// NewStoreUID returns the uid of a new memory store, random so that a uid
// says nothing about the org or the order of creation.
func NewStoreUID() string { return randomHex() }

// randomHex is 16 random bytes in hex.
func randomHex() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error()) // unreachable on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// ValidMemoryID reports whether id is shaped like a memory id.
func ValidMemoryID(id string) bool { return memoryIDRE.MatchString(id) }

// StoreRepoSlug is the slug of the hidden repo row of an API-created store.
func StoreRepoSlug(uid string) string { return storeRepoPrefix + uid }

// StoreRepoUID returns the store UID a hidden repo slug names, and whether
// slug is one (exactly as StoreRepoSlug writes it).
func StoreRepoUID(slug string) (string, bool) {
	uid, ok := strings.CutPrefix(slug, storeRepoPrefix)
	if !ok {
		return "", false
	}
	_, valid := StoreUID(StoreIDPrefix + uid)
	return uid, valid
}

// StoreID is a space's store id.
func StoreID(sp Space) string { return StoreIDPrefix + sp.UID }

// StoreUID returns the space UID a store id names, and whether it is one.
func StoreUID(id string) (string, bool) {
	uid, ok := strings.CutPrefix(id, StoreIDPrefix)
	if !ok || uid == "" || len(uid) > 64 {
		return "", false
	}
	for _, c := range uid {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return "", false
		}
	}
	return uid, true
}

// VersionID is the API id of a version row.
func VersionID(rowID int64) string { return VersionIDPrefix + strconv.FormatInt(rowID, 10) }

// VersionRowID returns the row id a version id names, and whether it is one.
func VersionRowID(id string) (int64, bool) {
	rest, ok := strings.CutPrefix(id, VersionIDPrefix)
	if !ok || rest == "" || len(rest) > 19 || rest[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseInt(rest, 10, 64)
	return n, err == nil && n > 0
}

// MemoryPath is an entry key's path in the memory stores API.
func MemoryPath(key string) string { return "/" + key }

// ContentSHA256 is the hex digest the API calls content_sha256, from an
// entry checksum ("sha256:<hex>").
func ContentSHA256(checksum string) string { return strings.TrimPrefix(checksum, "sha256:") }

// ChecksumOfSHA256 is the entry checksum of a content_sha256 value.
func ChecksumOfSHA256(hexDigest string) string { return "sha256:" + strings.ToLower(hexDigest) }

// The refusal messages of the memory stores dialects, exactly as Claude
// Code's client maps them to per-file and per-store reasons (reference §8).
const (
	MsgContentTooLarge = "content must be at most 102400 bytes"
	MsgContentSecret   = "memory content appears to contain a credential or API key; remove it before writing. If the credential is real, rotate it."
	MsgStoreFullCount  = "memory store has reached its memory limit"
	MsgStoreFullSize   = "memory store has reached its size limit"
	MsgPathTooLong     = "path must be at most 1024 bytes"
	MsgPathTooDeep     = "path must be at most 20 segments deep"
	MsgPathDotSegment  = "path must not contain . or .. segments"
	MsgPathControl     = "path must not contain control or format characters"
	MsgPathNFC         = "path must be NFC-normalized"
	MsgArchived        = "cannot modify archived resource: this memory store is archived"
)

// StoreArchived is the refusal of a change to an archived memory store:
// EInvalid with MsgArchived, the message the memory stores' clients know.
func StoreArchived() *Error {
	return &Error{Code: EInvalid, Message: MsgArchived, Reason: ReasonArchived}
}

// MemoryKey checks a memory path by the API's rules and returns the entry
// key it names, or EInvalid with the API's message.
func MemoryKey(path string) (string, error) {
	switch {
	case path == "":
		return "", Errorf(EInvalid, "path is required")
	case len(path) > MaxMemoryPathBytes:
		return "", Errorf(EInvalid, MsgPathTooLong)
	case !utf8.ValidString(path):
		return "", Errorf(EInvalid, "path must be valid UTF-8")
	case !strings.HasPrefix(path, "/"):
		return "", Errorf(EInvalid, "path must start with /")
	}
	for _, r := range path {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			return "", Errorf(EInvalid, MsgPathControl)
		}
	}
	if !norm.NFC.IsNormalString(path) {
		return "", Errorf(EInvalid, MsgPathNFC)
	}
	key := path[1:]
	segs := strings.Split(key, "/")
	if len(segs) > MaxMemoryPathDepth {
		return "", Errorf(EInvalid, MsgPathTooDeep)
	}
	for _, s := range segs {
		switch s {
		case ".", "..":
			return "", Errorf(EInvalid, MsgPathDotSegment)
		case "":
			return "", Errorf(EInvalid, "path must not contain empty segments")
		}
	}
	if reason := keyProblem(key); reason != "" {
		// A path the dialect allows but a teammem key does not (over 512
		// bytes, a backslash, a segment ending in a dot or a space, …) is
		// refused with the nearest of the messages Claude Code's client
		// maps to a per-file refusal; any other message would count
		// against the whole store. The details say which rule it broke.
		return "", Errorf(EInvalid, "%s", memoryKeyMessage(reason)).
			WithDetails(map[string]any{"reason": "teammem key rule: " + reason})
	}
	return key, nil
}

// memoryKeyMessage is the dialect's path message nearest to a teammem key
// rule's reason.
func memoryKeyMessage(reason string) string {
	switch {
	case strings.HasPrefix(reason, "longer than"):
		return MsgPathTooLong
	case strings.Contains(reason, "traversal"), strings.Contains(reason, "'.'"), strings.Contains(reason, "escapes"):
		return MsgPathDotSegment
	}
	return MsgPathControl
}

// MemoryStore is a space as a memory store: the space, its repo (hidden for
// a store made through the API) and the store's own fields.
type MemoryStore struct {
	Space Space
	Repo  Repo
	// API reports whether the store was created through the memory stores
	// API (an org store without a repository, with editable fields).
	API         bool
	Name        string
	Description string
	Metadata    map[string]string
	ArchivedAt  *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Owner is the handle of a personal space's user.
	Owner string
}

// ID is the store's API id.
func (m MemoryStore) ID() string { return StoreID(m.Space) }

// Archived reports whether the store is read-only for good.
func (m MemoryStore) Archived() bool { return m.ArchivedAt != nil }

// MemoryStoreCreateParams creates an API store.
type MemoryStoreCreateParams struct {
	Name        string
	Description string
	Metadata    map[string]string
	// MaxStores, when above 0, is the most API stores the org may hold
	// (archived ones count): the create is refused with TooManyStores,
	// atomically with every other create of the org.
	MaxStores int
}

// The stores-per-org cap (TEAMMEM_MAX_STORES_PER_ORG): its default and the
// highest value it may be set to.
const (
	DefaultMaxStoresPerOrg = 1000
	MaxStoresPerOrgCeiling = 100000
)

// TooManyStores is the refusal of a create over the org's store cap:
// ETooLarge, which the memory stores answer as Anthropic's 400
// invalid_request_error.
func TooManyStores(max int) error {
	return Errorf(ETooLarge, "the organization has reached its limit of %d memory stores; delete one before creating another", max).
		WithReason(ReasonTooManyStores).WithDetails(map[string]any{"max_stores_per_org": max})
}

// MemoryStoreUpdateParams changes an API store; nil fields stay as they are.
type MemoryStoreUpdateParams struct {
	Name        *string
	Description *string
	Metadata    map[string]string // the whole new map when not nil
	ArchivedAt  *time.Time
}

// MemoryStoreFilter narrows and pages MemoryStoreList. A store is listed
// when it is a team space, an API store, or UserID's personal space.
type MemoryStoreFilter struct {
	UserID          int64
	AfterSpaceID    int64 // page: stores with a larger space id
	Limit           int
	IncludeArchived bool
	CreatedGTE      *time.Time
	CreatedLTE      *time.Time
}

// MemoryFilter narrows and pages MemoriesList: live entries in key byte
// order, after AfterKey, whose key starts with Prefix.
type MemoryFilter struct {
	Prefix      string
	AfterKey    string
	Limit       int
	WithContent bool
}

// MemoryVersionFilter narrows and pages MemoryVersionsList, newest first.
type MemoryVersionFilter struct {
	MemoryID string
	// Operation is "created" (the first version of its memory), "modified"
	// (a later write) or "deleted"; empty for all.
	Operation  string
	SessionID  string
	KeyID      string
	BeforeID   int64 // page: rows with a smaller id; 0 = from the newest
	Limit      int
	CreatedGTE *time.Time
	CreatedLTE *time.Time
	// WithContent also reads each version's content.
	WithContent bool
}
