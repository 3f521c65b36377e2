package teammem

import (
	"context"
	"time"
)

// Store is teammem's persistence. Every method that touches tenant data takes
// the org explicitly; no method can reach another org's rows by omission.
// Drivers translate their own errors into this package's codes:
//   - ENotFound when a named row does not exist (in that org);
//   - EConflict when a unique name is taken;
//   - EInvalid when a value cannot be stored (e.g. text the database refuses);
//   - EUnavailable when the database cannot be reached;
//   - EInternal for anything else.
//
// Methods return only those codes unless their comment says otherwise.
type Store interface {
	// Ping checks that the database answers and migrations are applied.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error

	// OrgCreate creates an org (EConflict when the slug is taken).
	OrgCreate(ctx context.Context, p OrgCreateParams) (Org, error)
	// OrgGet returns an org by id.
	OrgGet(ctx context.Context, orgID int64) (Org, error)
	// OrgGetBySlug returns an org by slug.
	OrgGetBySlug(ctx context.Context, slug string) (Org, error)
	// OrgList lists every org, oldest first (server operators only).
	OrgList(ctx context.Context) ([]Org, error)
	// OrgUpdate changes an org's name, settings or disabled flag.
	OrgUpdate(ctx context.Context, orgID int64, p OrgUpdateParams) (Org, error)
	// OrgEdit is an atomic read-modify-write of an org: edit sees the org as
	// stored, with every other OrgEdit and OrgUpdate of it held off until
	// the change commits, and returns the update to make. An error from
	// edit (returned as is) changes nothing; ENotFound when no such org.
	OrgEdit(ctx context.Context, orgID int64, edit func(Org) (OrgUpdateParams, error)) (Org, error)
	// OrgCount counts orgs; bootstrap uses it to detect an empty database.
	OrgCount(ctx context.Context) (int, error)

	// UserCreate creates a user (EConflict when the handle is taken in the org).
	UserCreate(ctx context.Context, orgID int64, p UserCreateParams) (User, error)
	// UserGet returns a user by id.
	UserGet(ctx context.Context, orgID, userID int64) (User, error)
	// UserGetByHandle returns a user by handle.
	UserGetByHandle(ctx context.Context, orgID int64, handle string) (User, error)
	// UserList lists an org's users, oldest first.
	UserList(ctx context.Context, orgID int64) ([]User, error)
	// UserUpdate changes a user's role or disabled flag.
	UserUpdate(ctx context.Context, orgID, userID int64, p UserUpdateParams) (User, error)

	// KeyCreate stores a key's prefix and hash (never the key). With
	// p.MaxActive set it refuses, atomically with every other KeyCreate of
	// the user, a key beyond that many active (neither revoked nor expired)
	// ones: TooManyKeys' EConflict.
	KeyCreate(ctx context.Context, orgID int64, p KeyCreateParams) (APIKey, error)
	// KeyLookup resolves a key hash to its principal. It is the only lookup
	// not scoped by org, because the key itself names the org. It returns
	// the principal even when the key, user or org is disabled, revoked or
	// expired; the caller decides (ENotFound when no key has that hash).
	KeyLookup(ctx context.Context, hash []byte) (Principal, error)
	// KeyList lists an org's keys without secrets, newest first.
	KeyList(ctx context.Context, orgID int64, f KeyFilter) ([]APIKey, error)
	// KeyRevoke revokes a key at time at.
	KeyRevoke(ctx context.Context, orgID int64, keyID string, at time.Time) (APIKey, error)
	// KeysTouch records last-use times, coalesced by the caller.
	KeysTouch(ctx context.Context, used map[string]time.Time) error

	// RepoGet returns a repo by slug.
	RepoGet(ctx context.Context, orgID int64, slug string) (Repo, error)
	// RepoEnsure returns a repo by slug, creating it when missing.
	RepoEnsure(ctx context.Context, orgID int64, slug string) (Repo, error)
	// RepoList lists an org's repos with their team space heads.
	RepoList(ctx context.Context, orgID int64) ([]RepoSummary, error)

	// SpaceGet returns a space head (ENotFound when it was never written).
	SpaceGet(ctx context.Context, orgID int64, ref SpaceRef) (Space, error)
	// SpaceList lists every space of every org (operators' fsck only).
	SpaceList(ctx context.Context) ([]Space, error)
	// SpaceEnsure returns a space head, creating an empty space when missing.
	SpaceEnsure(ctx context.Context, orgID int64, ref SpaceRef) (Space, error)
	// SpaceWrite opens the write transaction of one space: the driver's
	// SQL for the commit sequence that SpaceApply runs (LockSpace takes the
	// space's lock). The caller ends it with Commit or Rollback. timing,
	// when not nil, is told how long the lock was waited for and held.
	SpaceWrite(ctx context.Context, orgID, spaceID int64, timing *WriteTiming) (WriteTx, error)
	// HeadsCache is the store's one cache of heads: space heads by the
	// name a request gives them, which Targets reads and the Writer keeps,
	// and entry heads by space head, which SpaceApply reads and keeps.
	HeadsCache() *HeadsCache
	// CanAnnounce reports whether a WriteTx sends ApplyParams.Announce's
	// notification inside the write's transaction (Postgres NOTIFY). When
	// it cannot, the caller publishes the change itself after the commit.
	CanAnnounce() bool

	// SpaceSnapshot returns a space's head and its live entries in key order
	// as of one point in time (one read transaction), so the head's checksum
	// always matches the entries even while writers commit.
	SpaceSnapshot(ctx context.Context, orgID, spaceID int64, withContent bool) (Space, []Entry, error)
	// EntriesList returns the live entries of a space in key order, with
	// content when withContent is set.
	EntriesList(ctx context.Context, orgID, spaceID int64, withContent bool) ([]Entry, error)
	// EntryGet returns one live entry with content (ENotFound for missing or
	// deleted entries).
	EntryGet(ctx context.Context, orgID, spaceID int64, key string) (Entry, error)
	// EntryHeads returns every entry head of a space, tombstones included.
	EntryHeads(ctx context.Context, orgID, spaceID int64) (map[string]Entry, error)
	// ChangesList returns the entries (with content) and tombstones changed
	// after version since, in version order.
	ChangesList(ctx context.Context, orgID, spaceID, since int64) ([]Entry, error)
	// EntriesSearch finds the live entries of an org's spaces that f may
	// read holding every one of f.Terms, with the driver's own full-text
	// index, kept current in every write's transaction: of those, the
	// SearchCandidates most recently written, in no set order, each with
	// the first SearchTextMax characters of its content (RankSearch ranks
	// them). Memory stores made through the API, which belong to no repo,
	// are never found.
	EntriesSearch(ctx context.Context, orgID int64, f SearchFilter) ([]SearchRow, error)
	// EntryHistory returns an entry's versions, newest first.
	EntryHistory(ctx context.Context, orgID, spaceID int64, key string) ([]EntryVersion, error)
	// EntryVersionGet returns one recorded version with its content (empty
	// for a redacted version, which says so in RedactedAt).
	EntryVersionGet(ctx context.Context, orgID, spaceID int64, key string, version int64) (EntryVersion, error)
	// VersionRedact erases the content of one recorded version of an entry,
	// keeping its row with RedactedAt and RedactedBy, under the space's
	// write lock, after PlanRedact allowed it against the entry's head, and
	// in the same transaction erases the same content from the proposals
	// of the space (EraseProposal with the entry's key and the version's
	// checksum). It returns the version as stored afterwards and whether
	// this call redacted it (false: it already was, and is returned as it
	// is, without the write lock). Once the change commits the driver's
	// follow-up work removes the bytes from its files in the background, as
	// HistoryScrub does; it never makes the call, or another org's writes,
	// wait for readers. ENotFound when the space has no such version;
	// PlanRedact's EConflict and EInvalid as they are.
	VersionRedact(ctx context.Context, orgID, spaceID int64, p VersionRedactParams) (EntryVersion, bool, error)
	// VersionsPurge applies an org's history retention: it deletes the
	// versions created before p.Before (when not zero) and those beyond the
	// p.MaxPerKey newest of their entry (when not 0), but never an entry's
	// newest version, which is its live content or its delete marker. It
	// deletes in transactions of at most p.Batch rows, so other writers
	// wait for one batch at most. An error after some batches committed
	// leaves those deleted; the counts say how far it got. It does not
	// scrub: a sweep purges every org, then calls HistoryScrub once.
	VersionsPurge(ctx context.Context, orgID int64, p VersionsPurgeParams) (VersionsPurged, error)
	// SpaceVersionsPurge deletes every recorded version of a space, in
	// batches as VersionsPurge does, and the content of every proposal of
	// the space (EraseProposal for every key) and its session notes (for a
	// personal space, also every session note its owner uploaded: the
	// owner's erasure of their history), then has the bytes removed as
	// VersionRedact does; the space's entries and tombstones stay. It
	// returns how many versions it deleted (0 for a space of another org).
	SpaceVersionsPurge(ctx context.Context, orgID, spaceID int64) (int, error)
	// HistoryScrub makes what purges and redactions deleted unrecoverable
	// from the database's files as far as the driver can (see its package
	// doc). EUnavailable when it could not finish for now (readers kept
	// it from it); the driver then retries by itself, in the background.
	HistoryScrub(ctx context.Context) error
	// ScrubsResume works the durable record of scrubs erasures still owe:
	// every erasure (VersionRedact, SpaceVersionsPurge, MemoryStoreDelete)
	// records one in its own transaction, and the driver's in-process
	// first attempt clears it when it finishes; a scrub put off (by an old
	// reader) or cut short by a restart stays recorded until a call of
	// ScrubsResume finishes it, on this replica or another. The jobs
	// queue's scrub job calls it every minute. nil when nothing is owed
	// any more; EUnavailable when some scrub still cannot finish (readers
	// older than the erasure); other codes for a failing database.
	ScrubsResume(ctx context.Context) error
	// TombstonesPurge deletes tombstones last changed before cutoff, in every
	// org, and advances each touched space's PurgedThrough. It returns how
	// many it removed.
	TombstonesPurge(ctx context.Context, cutoff time.Time) (int, error)

	// MemoryStoreGet returns the store whose space has UID uid (ENotFound
	// when the org has none). Visibility (another user's personal space)
	// is the caller's to check.
	MemoryStoreGet(ctx context.Context, orgID int64, uid string) (MemoryStore, error)
	// MemoryStoreList lists the stores f lets its user see, in space id
	// order: every existing team space, every API store and the user's own
	// personal spaces.
	MemoryStoreList(ctx context.Context, orgID int64, f MemoryStoreFilter) ([]MemoryStore, error)
	// MemoryStoreCreate creates an API store: a hidden repo row, its empty
	// team space and the store's fields, in one transaction; with
	// p.MaxStores set it refuses (TooManyStores, ETooLarge) an org that
	// holds that many API stores already, atomically with every other
	// create of the org.
	MemoryStoreCreate(ctx context.Context, orgID int64, p MemoryStoreCreateParams) (MemoryStore, error)
	// MemoryStoreUpdate changes an API store's fields (ENotFound when the
	// space is not one), under the space's write lock, so that an archive
	// and a write (whose LockSpace reads Archived) are ordered. An archived
	// store's fields do not change any more: EInvalid (MsgArchived) unless
	// p only archives (again, which keeps the first ArchivedAt).
	MemoryStoreUpdate(ctx context.Context, orgID, spaceID int64, p MemoryStoreUpdateParams) (MemoryStore, error)
	// MemoryStoreDelete deletes an API store with its memories, history and
	// the content of its proposals, then has the bytes removed as
	// VersionRedact does (ENotFound when the space is not one).
	MemoryStoreDelete(ctx context.Context, orgID, spaceID int64) error
	// MemoriesList returns a page of a space's live entries, in key byte
	// order, as f says.
	MemoriesList(ctx context.Context, orgID, spaceID int64, f MemoryFilter) ([]Entry, error)
	// MemoriesEach calls fn for each live entry of a space in key byte
	// order, as of one point in time, without holding them all; it returns
	// the head of that point. An error from fn stops it and is returned.
	MemoriesEach(ctx context.Context, orgID, spaceID int64, withContent bool, fn func(Space, Entry) error) (Space, error)
	// MemoryGet returns the live entry with a memory id, with content
	// (ENotFound for missing or deleted memories).
	MemoryGet(ctx context.Context, orgID, spaceID int64, memoryID string) (Entry, error)
	// MemoryVersionsList pages a space's versions, newest first.
	MemoryVersionsList(ctx context.Context, orgID, spaceID int64, f MemoryVersionFilter) ([]EntryVersion, error)
	// MemoryVersionGet returns one version row of a space by row id, with
	// content (ENotFound when the space has no such row).
	MemoryVersionGet(ctx context.Context, orgID, spaceID, rowID int64) (EntryVersion, error)
	// Proposals: held team writes (proposal.go).
	ProposalStore
	// Dreams: dream rows and their transitions (dreamstore.go).
	DreamStore
	// Sessions: what Claude Code sessions wrote, and their notes (session.go).
	SessionStore

	// AuditAppend adds an event to an org's audit log.
	AuditAppend(ctx context.Context, orgID int64, e AuditEvent) error
	// AuditList pages an org's audit log, newest first.
	AuditList(ctx context.Context, orgID int64, f AuditFilter) ([]AuditEvent, error)
}

// ApplyFunc decides the changes of one write given the locked head and the
// entry heads. current reads a live entry's content inside the transaction.
type ApplyFunc func(space Space, heads map[string]Entry, current func(key string) (string, error)) ([]EntryChange, error)

// OrgCreateParams creates an org.
type OrgCreateParams struct {
	Slug     string
	Name     string
	Settings OrgSettings
	// Owner, when set, is created with the org in the same transaction: a
	// user with role owner and one API key. An org is then never left
	// without a way in, whatever fails half way.
	Owner *OrgOwner
}

// OrgOwner is the first owner of a new org and their key.
type OrgOwner struct {
	Handle    string
	KeyName   string
	KeyPrefix string
	KeyHash   []byte
}

// OrgUpdateParams changes an org; nil fields stay as they are.
type OrgUpdateParams struct {
	Name     *string
	Settings *OrgSettings
	Disabled *bool
}

// UserCreateParams creates a user.
type UserCreateParams struct {
	Handle string
	Role   Role
}

// UserUpdateParams changes a user; nil fields stay as they are.
type UserUpdateParams struct {
	Role     *Role
	Disabled *bool
	// KeepOwner refuses (EConflict), atomically with other changes to the
	// org's users, a change that would leave the org without an active
	// owner.
	KeepOwner bool
}

// KeyCreateParams stores a new key.
type KeyCreateParams struct {
	UserID    int64
	Name      string
	Prefix    string
	Hash      []byte
	ReadOnly  bool
	ExpiresAt *time.Time
	// MaxActive, when above 0, is the most active keys the user may hold,
	// this one included (TEAMMEM_MAX_KEYS_PER_USER).
	MaxActive int
}

// KeyFilter narrows KeyList.
type KeyFilter struct {
	UserID int64 // 0: every user
}

// RepoSummary is a repo with its team space head (zero when never written).
type RepoSummary struct {
	Repo
	Team Space `json:"team"`
}

// AuditFilter narrows and pages AuditList.
type AuditFilter struct {
	ActorID  int64
	Repo     string
	Action   string
	BeforeID int64 // page: events with a smaller id; 0 = from the newest
	Limit    int
}

// PoolStats is a snapshot of a driver's connection pool, for metrics.
type PoolStats struct {
	InUse, Idle, Max int
	WaitCount        int64         // acquisitions that had to wait
	WaitDuration     time.Duration // total time spent waiting
	// Queries counts the statements the store sent to its database (on
	// SQLite, those of its statement cache, which every read takes, and
	// each transaction it began):
	// what a request answered from memory must leave unchanged.
	Queries int64
}

// PoolStatser is implemented by drivers that can report their pool.
type PoolStatser interface {
	PoolStats() PoolStats
}
