package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/teammem/teammem/internal/teammem"
)

// The generator fills a database directly with SQL, as a server would have
// after years of use: orgs with users and keys, repos each with a team
// space and a personal space, entries with their history and some
// tombstones, and audit events. Heads are consistent (teammem.Fsck passes):
// checksums come from teammem.EntryChecksum and SpaceChecksum.
//
// Some history is beyond the default retention, so that a retention sweep
// has work: every oldMod-th entry has an older version from oldAge ago, and
// the MEMORY.md of every crowdedMod-th team space has crowdedVersions
// recent versions, more than the default cap. Their contents are prefixes
// of the entry's, so they cost a hash each and no text generation.

// genSpec sizes a generated database.
type genSpec struct {
	orgs, repos, entries, entryBytes int
	samples                          int // repos whose keys and checksums are returned
}

const (
	usersPerOrg  = 5
	auditPerOrg  = 20
	tombstoneMod = 20 // every 20th entry is a tombstone
	genClient    = "bench-generator"

	oldMod          = 8                    // every 8th entry has a version past the retention
	oldAge          = 200 * 24 * time.Hour // older than the default 90 days
	crowdedMod      = 25                   // every 25th team space has a crowded MEMORY.md
	crowdedVersions = 120                  // over the default cap of 100 versions
)

// genSample is one generated repo the scale workload uses.
type genSample struct {
	key      string // the owner key of its org
	slug     string
	checksum string // of its team space
}

// genResult counts what was generated.
type genResult struct {
	orgs, repos, spaces, entries, versions int
	bytes                                  int64
	samples                                []genSample
}

// table is a generated table, in the order rows must be inserted (foreign
// keys point backwards in this list).
type table struct {
	name string
	cols []string
}

var genTables = []table{
	{"orgs", []string{"id", "slug", "name", "settings", "disabled", "created_at"}},
	{"users", []string{"id", "org_id", "handle", "role", "disabled", "created_at"}},
	{"api_keys", []string{"id", "org_id", "user_id", "name", "prefix", "key_hash", "read_only", "created_at"}},
	{"repos", []string{"id", "org_id", "slug", "created_at"}},
	{"spaces", []string{"id", "org_id", "repo_id", "scope", "user_id", "version", "checksum", "entry_count", "total_bytes", "purged_through", "updated_at"}},
	{"entries", []string{"org_id", "space_id", "key", "content", "checksum", "size", "version", "deleted", "author_id", "client_id", "updated_at"}},
	{"entry_versions", []string{"id", "org_id", "space_id", "key", "version", "op", "checksum", "size", "content", "author_id", "client_id", "created_at"}},
	{"audit_events", []string{"id", "org_id", "actor_id", "action", "repo", "target", "details", "created_at"}},
}

// serialTables are the tables whose ids the generator assigns past the
// current maximum.
var serialTables = []string{"orgs", "users", "repos", "spaces", "entry_versions", "audit_events"}

// sink receives generated rows (values: string, int64, bool, []byte,
// time.Time or nil) and writes them in batches, table by table in
// genTables order, so foreign keys always find their rows.
type sink interface {
	// maxID returns the largest id of a serial table.
	maxID(ctx context.Context, table string) (int64, error)
	add(ctx context.Context, table string, row []any) error
	// finish flushes and brings sequences and statistics up to date.
	finish(ctx context.Context) error
	close()
}

// generator produces the rows of a genSpec.
type generator struct {
	spec genSpec
	out  sink
	now  time.Time
	next map[string]int64 // next id per serial table
	// nextOlder is the next id of an older version. Older versions get the
	// lowest ids of the run, as on a server that wrote them long ago, so
	// they sit together at the start of the table, as they would.
	nextOlder int64
	res       genResult
}

// generate writes spec's rows to out.
func generate(ctx context.Context, out sink, spec genSpec) (genResult, error) {
	g := &generator{spec: spec, out: out, now: time.Now().UTC().Truncate(time.Microsecond), next: map[string]int64{}}
	for _, t := range serialTables {
		n, err := out.maxID(ctx, t)
		if err != nil {
			return g.res, err
		}
		g.next[t] = n + 1
	}
	g.nextOlder = g.next["entry_versions"]
	g.next["entry_versions"] += olderVersions(spec)
	orgs := make([]genOrg, spec.orgs)
	for i := range orgs {
		o, err := g.org(ctx)
		if err != nil {
			return g.res, err
		}
		orgs[i] = o
	}
	every := max(1, spec.repos/max(1, spec.samples))
	for r := range spec.repos {
		o := orgs[r%len(orgs)]
		sample, err := g.repo(ctx, o, r)
		if err != nil {
			return g.res, err
		}
		if r%every == 0 && len(g.res.samples) < spec.samples {
			g.res.samples = append(g.res.samples, sample)
		}
	}
	return g.res, out.finish(ctx)
}

// olderVersions counts the older versions spec's spaces get (see entries).
func olderVersions(spec genSpec) int64 {
	n := int64(0)
	for r := range spec.repos {
		n += olderOf(spec.entries, r%crowdedMod == 0) + olderOf(max(1, spec.entries/10), false)
	}
	return n
}

// olderOf counts the older versions of a space of n entries: one for every
// entry i with i%oldMod == 1, and crowdedVersions more when crowded.
func olderOf(n int, crowded bool) int64 {
	old := int64((n + oldMod - 2) / oldMod)
	if crowded && n > 0 {
		return old + crowdedVersions
	}
	return old
}

// id hands out the next id of a serial table.
func (g *generator) id(table string) int64 {
	id := g.next[table]
	g.next[table]++
	return id
}

// genOrg is a generated org: its id, slug, users and owner key.
type genOrg struct {
	id    int64
	slug  string
	users []int64 // users[0] is the owner
	key   string
}

// benchOrgKey returns the deterministic key of a generated user, so a
// generated database can be used without reading keys back.
func benchOrgKey(slug, handle string) string {
	h := sha256.Sum256([]byte("teammem-bench/" + slug + "/" + handle))
	s := hex.EncodeToString(h[:])
	return "tmk_" + s[:8] + "_" + s[8:48]
}

// org writes one org with its users, their keys and its audit events.
func (g *generator) org(ctx context.Context) (genOrg, error) {
	id := g.id("orgs")
	o := genOrg{id: id, slug: fmt.Sprintf("scale-%d", id)}
	if err := g.out.add(ctx, "orgs", []any{id, o.slug, "Scale " + o.slug, "{}", false, g.now}); err != nil {
		return o, err
	}
	for u := range usersPerOrg {
		uid, handle, role := g.id("users"), fmt.Sprintf("dev%d", u), teammem.RoleMember
		if u == 0 {
			handle, role = "admin", teammem.RoleOwner
		}
		key := benchOrgKey(o.slug, handle)
		if u == 0 {
			o.key = key
		}
		o.users = append(o.users, uid)
		rows := [][]any{
			{uid, id, handle, string(role), false, g.now},
			{uuid.NewSHA1(uuid.NameSpaceOID, []byte(key)).String(), id, uid, "generated", teammem.KeyPrefix(key), teammem.HashKey(key), false, g.now},
		}
		for i, t := range []string{"users", "api_keys"} {
			if err := g.out.add(ctx, t, rows[i]); err != nil {
				return o, err
			}
		}
	}
	g.res.orgs++
	for i := range auditPerOrg {
		row := []any{g.id("audit_events"), id, o.users[0], "key.created", "", fmt.Sprint(i), "{}", g.now.Add(-time.Duration(i) * time.Hour)}
		if err := g.out.add(ctx, "audit_events", row); err != nil {
			return o, err
		}
	}
	return o, nil
}

// repo writes repo number r of org o with its team and personal spaces.
func (g *generator) repo(ctx context.Context, o genOrg, r int) (genSample, error) {
	id := g.id("repos")
	slug := fmt.Sprintf("%s/repo-%05d", o.slug, r)
	if err := g.out.add(ctx, "repos", []any{id, o.id, slug, g.now.Add(-30 * 24 * time.Hour)}); err != nil {
		return genSample{}, err
	}
	g.res.repos++
	sum, err := g.space(ctx, o, id, 0, g.spec.entries, r%crowdedMod == 0)
	if err != nil {
		return genSample{}, err
	}
	owner := o.users[r%len(o.users)]
	if _, err := g.space(ctx, o, id, owner, max(1, g.spec.entries/10), false); err != nil {
		return genSample{}, err
	}
	return genSample{key: o.key, slug: slug, checksum: sum}, nil
}

// genEntry is an entry's head before it is written.
type genEntry struct {
	key, content, checksum string
	written                int64 // version of its write
	version                int64 // version of its last change (the delete, for a tombstone)
	deleted                bool
	at                     time.Time
	older                  []genVersion // versions before its write, oldest first
}

// genVersion is an older version of an entry.
type genVersion struct {
	version int64
	content string
	at      time.Time
}

// space writes a space of n entries (the team space when user is 0) and
// returns its checksum. A crowded space's MEMORY.md has crowdedVersions
// older versions.
func (g *generator) space(ctx context.Context, o genOrg, repoID, user int64, n int, crowded bool) (string, error) {
	id := g.id("spaces")
	entries := g.entries(id, n, crowded)
	version, sums, total := int64(0), map[string]string{}, int64(0)
	for _, e := range entries {
		version = max(version, e.version)
		if !e.deleted {
			sums[e.key] = e.checksum
			total += int64(len(e.content))
		}
	}
	scope, userID := "team", any(nil)
	if user != 0 {
		scope, userID = "personal", user
	}
	sum := teammem.SpaceChecksum(sums)
	if err := g.out.add(ctx, "spaces", []any{id, o.id, repoID, scope, userID, version, sum, int64(len(sums)), total, int64(0), g.now}); err != nil {
		return "", err
	}
	g.res.spaces++
	for _, e := range entries {
		if err := g.entry(ctx, o, id, e); err != nil {
			return "", err
		}
	}
	return sum, nil
}

// entries makes a space's entries. The older versions come first, as
// versions 1 to h of the space (one commit may write several keys); then
// entry i is written at version h+i+1 and every tombstoneMod-th is deleted
// afterwards. Sizes spread around entryBytes.
func (g *generator) entries(spaceID int64, n int, crowded bool) []genEntry {
	h := int64((n + oldMod - 2) / oldMod) // entries i with i%oldMod == 1
	if crowded && n > 0 {
		h = max(h, crowdedVersions) // MEMORY.md's older versions
	}
	out := make([]genEntry, n)
	deletes := h + int64(n)
	for i := range out {
		size := g.spec.entryBytes/2 + (i*37)%max(1, g.spec.entryBytes)
		content := prose(uint64(spaceID)<<20|uint64(i), size)
		e := genEntry{key: genKey(i), content: content, checksum: teammem.EntryChecksum(content), written: h + int64(i+1), version: h + int64(i+1),
			at: g.now.Add(-time.Duration(n-i) * time.Minute)}
		switch {
		case i == 0 && crowded:
			for v := range int64(crowdedVersions) {
				e.older = append(e.older, genVersion{version: v + 1, content: content[:1+int(v)*(len(content)-1)/crowdedVersions],
					at: e.at.Add(-time.Duration(crowdedVersions-v) * time.Hour)})
			}
		case i%oldMod == 1:
			e.older = []genVersion{{version: int64(i/oldMod + 1), content: content[:len(content)/2], at: g.now.Add(-oldAge)}}
		}
		if i%tombstoneMod == tombstoneMod-1 {
			deletes++
			e.deleted, e.version = true, deletes
		}
		out[i] = e
	}
	return out
}

// genKey names entry i: MEMORY.md first, then topic files in a few folders.
func genKey(i int) string {
	if i == 0 {
		return "MEMORY.md"
	}
	kinds := []string{"feedback", "project", "reference", "user"}
	return fmt.Sprintf("%s/%s-%04d.md", kinds[i%4], kinds[(i/4)%4], i)
}

// entry writes an entry's head and history: its write, and its delete for
// a tombstone.
func (g *generator) entry(ctx context.Context, o genOrg, spaceID int64, e genEntry) error {
	author, size := o.users[0], int64(len(e.content))
	var rows [][]any
	for _, v := range e.older {
		rows = append(rows, []any{g.nextOlder, o.id, spaceID, e.key, v.version, "write", teammem.EntryChecksum(v.content),
			int64(len(v.content)), v.content, author, genClient, v.at})
		g.nextOlder++
	}
	rows = append(rows, []any{g.id("entry_versions"), o.id, spaceID, e.key, e.written, "write", e.checksum, size, e.content, author, genClient, e.at})
	head := []any{o.id, spaceID, e.key, e.content, e.checksum, size, e.version, false, author, genClient, e.at}
	if e.deleted {
		at := e.at.Add(time.Second)
		rows = append(rows, []any{g.id("entry_versions"), o.id, spaceID, e.key, e.version, "delete", e.checksum, int64(0), nil, author, genClient, at})
		head = []any{o.id, spaceID, e.key, nil, e.checksum, int64(0), e.version, true, author, genClient, at}
	}
	if err := g.out.add(ctx, "entries", head); err != nil {
		return err
	}
	for _, r := range rows {
		if err := g.out.add(ctx, "entry_versions", r); err != nil {
			return err
		}
		g.res.versions++
	}
	g.res.entries++
	g.res.bytes += size
	return nil
}
