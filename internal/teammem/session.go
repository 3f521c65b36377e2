package teammem

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
)

// Sessions teammem knows (issue 24). A session is a Claude Code session
// that wrote memories (every version records the X-Claude-Code-Session-Id
// it came with) or uploaded session-memory notes. Its public id is
// SessionIDPrefix followed by the session's UUID as 32 lowercase hex
// digits without dashes, so a client computes the id of its own session.
// Sessions are derived from what is stored, not recorded apart: a session
// whose versions were all purged by retention, and which uploaded no notes,
// is no longer known.
const SessionIDPrefix = "sesn_"

// SessionPublicID returns the sesn_ id of a Claude Code session id (a UUID,
// dashes optional, any case), or EInvalid when it is not a UUID.
func SessionPublicID(ccSessionID string) (string, error) {
	hex, ok := uuidHex(strings.ReplaceAll(ccSessionID, "-", ""))
	if !ok || !(len(ccSessionID) == 32 || len(ccSessionID) == 36 && canonicalDashes(ccSessionID)) {
		return "", Errorf(EInvalid, "a Claude Code session id must be a UUID")
	}
	return SessionIDPrefix + hex, nil
}

// SessionClaudeCodeID returns the Claude Code session id (the canonical
// UUID: lowercase, dashed 8-4-4-4-12) a sesn_ id names, or EInvalid for
// anything else: another prefix, uppercase hex, dashes, another length.
func SessionClaudeCodeID(id string) (string, error) {
	hex, ok := strings.CutPrefix(id, SessionIDPrefix)
	if !ok || len(hex) != 32 || strings.ToLower(hex) != hex {
		return "", Errorf(EInvalid, "a session id is %q followed by 32 lowercase hex digits", SessionIDPrefix)
	}
	if _, ok := uuidHex(hex); !ok {
		return "", Errorf(EInvalid, "a session id is %q followed by 32 lowercase hex digits", SessionIDPrefix)
	}
	return hex[:8] + "-" + hex[8:12] + "-" + hex[12:16] + "-" + hex[16:20] + "-" + hex[20:], nil
}

// uuidHex returns s lowercased when it is 32 hex digits.
func uuidHex(s string) (string, bool) {
	if len(s) != 32 {
		return "", false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return "", false
		}
	}
	return strings.ToLower(s), true
}

// canonicalDashes reports whether a 36-character s has its dashes where a
// UUID has them.
func canonicalDashes(s string) bool {
	return s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-'
}

// Session is what teammem knows of one Claude Code session in one org, as
// one caller may see it: Spaces holds only the spaces that caller may read.
type Session struct {
	// ID is the public id (SessionIDPrefix + 32 hex digits).
	ID string
	// ClaudeCodeSessionID is the canonical UUID the versions record.
	ClaudeCodeSessionID string
	OrgID               int64
	// Spaces are the spaces the session wrote to or uploaded notes for,
	// in space id order.
	Spaces []SessionSpace
	// FirstSeen and LastSeen are the times of its first and last recorded
	// version or notes upload.
	FirstSeen, LastSeen time.Time
	// NotesUploaded reports whether it uploaded notes (for any space
	// listed); NotesSize is their total size in bytes.
	NotesUploaded bool
	NotesSize     int64
}

// SessionSpace is one space a session touched.
type SessionSpace struct {
	SpaceID int64
	// Repo is the repo's slug; for a memory store created through the API
	// it is the hidden "@memstore/…" slug.
	Repo string
	// StoreID names the space as a memory store (every space is one).
	StoreID string
	// Store reports whether the space is a memory store created through
	// the API (not a repo's).
	Store  bool
	Scope  Scope
	UserID int64 // owner of a personal space
	// Writes counts the versions of the session still recorded there.
	Writes int
	// NotesSize is the size of the notes uploaded for this space (0: none).
	NotesSize int64
}

// Repos returns the slugs of the repos (not API stores) among the spaces,
// in order and without repeats.
func (s Session) Repos() []string {
	var out []string
	for _, sp := range s.Spaces {
		if !sp.Store && !slices.Contains(out, sp.Repo) {
			out = append(out, sp.Repo)
		}
	}
	return out
}

// SessionFilter selects sessions a caller may see, newest (FirstSeen, the
// API's created_at) first.
type SessionFilter struct {
	// ClaudeCodeSessionID, when set, selects that one session.
	ClaudeCodeSessionID string
	// UserID is the user whose personal spaces count; -1 for none (a
	// viewer's key). Team spaces of the org always count.
	UserID int64
	// Before pages on: sessions strictly after this cursor in the order
	// (FirstSeen descending, then ClaudeCodeSessionID descending). Zero:
	// from the newest.
	Before SessionCursor
	Limit  int
}

// SessionCursor is a position in the session order.
type SessionCursor struct {
	FirstSeen           time.Time
	ClaudeCodeSessionID string
}

// SessionNotes is the session-memory notes one session uploaded for one
// space (a repo's team space).
type SessionNotes struct {
	OrgID               int64
	ClaudeCodeSessionID string
	SpaceID             int64
	UploaderID          int64
	KeyID               string
	Content             string
	Size                int
	Checksum            string
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// SessionNotesPutParams is one upload of notes: it replaces the notes the
// session uploaded earlier for the same space.
type SessionNotesPutParams struct {
	ClaudeCodeSessionID string
	SpaceID             int64
	UploaderID          int64
	KeyID               string
	Content             string
}

// SessionVersionsFilter bounds the versions a session wrote.
type SessionVersionsFilter struct {
	// TeamOnly leaves out personal spaces' versions.
	TeamOnly bool
	// AfterID pages on: versions with a larger row id only.
	AfterID int64
	// Limit caps how many versions come back (ListLimit's rules).
	Limit int
}

// SessionStore is the part of Store that knows sessions.
type SessionStore interface {
	// SessionsList returns the sessions f selects, each with the spaces f
	// lets its caller see (a session none of whose spaces are visible is
	// left out), newest first, at most ListLimit(f.Limit).
	SessionsList(ctx context.Context, orgID int64, f SessionFilter) ([]Session, error)
	// SessionNotesPut stores p's notes, replacing the session's earlier
	// notes for the space (EInvalid for a space of another org).
	SessionNotesPut(ctx context.Context, orgID int64, p SessionNotesPutParams) (SessionNotes, error)
	// SessionNotesList returns a session's notes of every space of the org,
	// with content, in space id order.
	SessionNotesList(ctx context.Context, orgID int64, ccSessionID string) ([]SessionNotes, error)
	// SessionVersionsList returns the versions a session wrote (with
	// content and Key), oldest first.
	SessionVersionsList(ctx context.Context, orgID int64, ccSessionID string, f SessionVersionsFilter) ([]EntryVersion, error)
}

// SessionGet returns the session id (a sesn_ id) names as f's caller may
// see it: ENotFound when it is malformed, unknown, or wrote to no space the
// caller may read, so an invisible session and a missing one look alike.
func SessionGet(ctx context.Context, st SessionStore, orgID int64, id string, f SessionFilter) (Session, error) {
	cc, err := SessionClaudeCodeID(id)
	if err != nil {
		return Session{}, Errorf(ENotFound, "session not found")
	}
	f.ClaudeCodeSessionID, f.Before, f.Limit = cc, SessionCursor{}, 1
	list, err := st.SessionsList(ctx, orgID, f)
	if err != nil {
		return Session{}, err
	}
	if len(list) == 0 {
		return Session{}, Errorf(ENotFound, "session not found")
	}
	return list[0], nil
}

// SessionVisibility is the filter of what p may see: the org's team spaces
// and, for a role that reads personal spaces, p's own.
func SessionVisibility(p Principal) SessionFilter {
	f := SessionFilter{UserID: p.User.ID}
	if Authorize(p, ActPersonalRead, false) != nil {
		f.UserID = -1
	}
	return f
}

// SessionSpaceRow is one row a driver's session query returns: what one
// session left in one space. GroupSessions turns rows into Sessions.
type SessionSpaceRow struct {
	ClaudeCodeSessionID string
	Space               SessionSpace
	// SpaceUID is the space's uid (a store's id is StoreIDPrefix + it).
	SpaceUID            string
	FirstSeen, LastSeen time.Time
}

// GroupSessions gathers rows into sessions of org, in the session order
// (FirstSeen descending, then ClaudeCodeSessionID descending), each
// session's spaces in space id order. Rows of a session id that is not a
// UUID are dropped: no sesn_ id names them.
func GroupSessions(orgID int64, rows []SessionSpaceRow) []Session {
	byID := map[string]*Session{}
	var out []*Session
	for _, r := range rows {
		s, ok := byID[r.ClaudeCodeSessionID]
		if !ok {
			id, err := SessionPublicID(r.ClaudeCodeSessionID)
			if err != nil {
				continue
			}
			s = &Session{ID: id, ClaudeCodeSessionID: r.ClaudeCodeSessionID, OrgID: orgID, FirstSeen: r.FirstSeen, LastSeen: r.LastSeen}
			byID[r.ClaudeCodeSessionID] = s
			out = append(out, s)
		}
		sp := r.Space
		sp.StoreID = StoreIDPrefix + r.SpaceUID
		s.Spaces = append(s.Spaces, sp)
		if r.FirstSeen.Before(s.FirstSeen) {
			s.FirstSeen = r.FirstSeen
		}
		if r.LastSeen.After(s.LastSeen) {
			s.LastSeen = r.LastSeen
		}
		s.NotesSize += sp.NotesSize
		s.NotesUploaded = s.NotesUploaded || sp.NotesSize > 0
	}
	slices.SortFunc(out, func(a, b *Session) int {
		if c := b.FirstSeen.Compare(a.FirstSeen); c != 0 {
			return c
		}
		return strings.Compare(b.ClaudeCodeSessionID, a.ClaudeCodeSessionID)
	})
	list := make([]Session, len(out))
	for i, s := range out {
		slices.SortFunc(s.Spaces, func(a, b SessionSpace) int { return cmp.Compare(a.SpaceID, b.SpaceID) })
		list[i] = *s
	}
	return list
}
