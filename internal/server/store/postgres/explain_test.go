package postgres_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// TestExplainHotQueries checks that the planner serves the driver's
// selective queries from indexes, on its own (enable_seqscan stays on), once
// the tables hold enough rows for a sequential scan to cost more.
//
// It does not copy the driver's SQL: it runs every Store method through a
// pool of one connection, reads the statements pgx prepared on it
// (pg_prepared_statements) and explains those, with EXPLAIN EXECUTE:
//   - the hot queries below with representative parameters and a custom
//     plan, as the first executions of a cached statement get;
//   - every other statement with a generic plan (parameters unknown).
//
// A Seq Scan on one of bigTables fails the test, unless the statement is in
// seqScanAllowed with the reason. A hot query that no prepared statement
// matches any more fails too: the driver changed and this test must follow.
func TestExplainHotQueries(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := postgres.Open(ctx, explainPoolOfOne(t, testpg.NewDatabase(t)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// The plans are those of the fill's statistics: the erasures' table
	// rewrites (scrub.go), which would compact the tables under them, are
	// held back, and their statements stay off the one connection.
	postgres.PauseScrubs(db)
	f := explainFill(t, db.Pool())
	explainExercise(t, db, f)

	conn, err := db.Pool().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	stmts := explainStatements(t, conn.Conn())
	covered := map[string]bool{}
	for _, q := range explainHotQueries(f) {
		t.Run(q.name, func(t *testing.T) {
			s := q.find(t, stmts)
			covered[s.name] = true
			for _, args := range q.args {
				plan := explainPlan(t, conn.Conn(), s, "force_custom_plan", args)
				checkNoSeqScan(t, q.name, s.sql, plan)
			}
		})
	}
	t.Run("every other statement", func(t *testing.T) {
		for _, s := range stmts {
			if covered[s.name] || strings.EqualFold(s.sql, "BEGIN") || strings.EqualFold(s.sql, "COMMIT") {
				continue // transaction control has no plan
			}
			plan := explainPlan(t, conn.Conn(), s, "force_generic_plan", nil)
			checkNoSeqScan(t, "generic plan", s.sql, plan)
		}
	})
}

// bigTables are the tables that grow with use; a selective query must
// never read one of them whole.
var bigTables = []string{"entries", "entry_versions", "spaces", "api_keys", "repos", "audit_events"}

// seqScanAllowed lists statements (by a fragment of their normalized text)
// that legitimately read a big table whole, and why.
var seqScanAllowed = map[string]string{
	"FROM spaces ORDER BY id": "SpaceList serves teammem-server fsck, which checks every space by design",
}

// explainPoolOfOne returns rawURL with a pool of one connection, so every
// statement the driver prepares lands in that connection's session.
func explainPoolOfOne(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "1")
	u.RawQuery = q.Encode()
	return u.String()
}

// explainFixture names rows of the filled database that the exercise and
// the hot queries use.
type explainFixture struct {
	org, user, repo, space int64
	repoSlug, entryKey     string
	keyHash                []byte
	keyID                  string
	cutoff                 time.Time
	purgeSpaces            []int64
}

// explainFill fills the database with 20 orgs of 10 users (10 keys each)
// and 50 repos, each repo with a team space of 12 entries and a personal
// space of 3; every entry has two versions, every tenth is a tombstone (a
// few of them older than the 30-day retention); 100 audit events per org.
// Then it analyzes, as autovacuum would have.
func explainFill(t *testing.T, pool *pgxpool.Pool) explainFixture {
	t.Helper()
	ctx := t.Context()
	fill := []string{
		`INSERT INTO orgs (slug, name, created_at) SELECT 'org-' || g, 'Org ' || g, now() FROM generate_series(1, 20) g`,
		`INSERT INTO users (org_id, handle, role, created_at)
			SELECT o.id, 'user-' || g, CASE WHEN g = 1 THEN 'owner' ELSE 'member' END, now() FROM orgs o, generate_series(1, 10) g`,
		`INSERT INTO api_keys (id, org_id, user_id, name, prefix, key_hash, created_at)
			SELECT 'key-' || u.id || '-' || g, u.org_id, u.id, 'key ' || g, 'prefix' || g,
				sha256(convert_to('key-' || u.id || '-' || g, 'UTF8')), now() - g * interval '1 hour'
			FROM users u, generate_series(1, 10) g`,
		`INSERT INTO repos (org_id, slug, created_at) SELECT o.id, 'owner/repo-' || g, now() FROM orgs o, generate_series(1, 50) g`,
		`INSERT INTO spaces (org_id, repo_id, scope, version, checksum, entry_count, total_bytes, updated_at)
			SELECT org_id, id, 'team', 24, 'sha256:team', 11, 3520, now() FROM repos`,
		`INSERT INTO spaces (org_id, repo_id, scope, user_id, version, checksum, entry_count, total_bytes, updated_at)
			SELECT r.org_id, r.id, 'personal', (SELECT min(u.id) FROM users u WHERE u.org_id = r.org_id) + r.id % 10,
				6, 'sha256:personal', 3, 960, now() FROM repos r`,
		`INSERT INTO entries (org_id, space_id, key, content, checksum, size, version, deleted, author_id, client_id, updated_at)
			SELECT s.org_id, s.id, 'notes/topic-' || g || '.md',
				CASE WHEN g % 10 = 0 THEN NULL ELSE repeat(md5(s.id || '/' || g), 10) END,
				'sha256:' || md5(s.id || '/' || g), CASE WHEN g % 10 = 0 THEN 0 ELSE 320 END, g, g % 10 = 0,
				(SELECT min(u.id) FROM users u WHERE u.org_id = s.org_id), 'fill',
				CASE WHEN g % 10 = 0 AND s.id % 97 = 0 THEN now() - interval '40 days' ELSE now() - g * interval '1 minute' END
			FROM spaces s CROSS JOIN LATERAL generate_series(1, CASE WHEN s.scope = 'team' THEN 12 ELSE 3 END) g`,
		`INSERT INTO entry_versions (org_id, space_id, key, version, op, checksum, size, content, author_id, client_id, created_at)
			SELECT e.org_id, e.space_id, e.key, e.version * 2 - 2 + v, 'write', e.checksum, 320, repeat(md5(e.key), 10), e.author_id, 'fill', e.updated_at
			FROM entries e, generate_series(1, 2) v`,
		`INSERT INTO audit_events (org_id, actor_id, action, repo, target, details, created_at)
			SELECT o.id, (SELECT min(u.id) FROM users u WHERE u.org_id = o.id), CASE WHEN g % 3 = 0 THEN 'push.rejected' ELSE 'key.created' END,
				'owner/repo-' || g % 50, 'target', '{}', now() - g * interval '1 minute'
			FROM orgs o, generate_series(1, 100) g`,
		`ANALYZE`,
	}
	for _, q := range fill {
		if _, err := pool.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("fill: %v\n%s", err, q)
		}
	}
	f := explainFixture{repoSlug: "owner/repo-7", entryKey: "notes/topic-3.md", cutoff: time.Now().Add(-30 * 24 * time.Hour)}
	err := pool.QueryRow(ctx, `SELECT r.org_id, r.id, s.id, (SELECT min(u.id) FROM users u WHERE u.org_id = r.org_id)
		FROM repos r JOIN spaces s ON s.repo_id = r.id AND s.scope = 'team' WHERE r.org_id = (SELECT min(id) + 4 FROM orgs) AND r.slug = $1`,
		pgx.QueryExecModeSimpleProtocol, f.repoSlug).Scan(&f.org, &f.repo, &f.space, &f.user)
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `SELECT id, key_hash FROM api_keys WHERE user_id = $1 ORDER BY id LIMIT 1`,
		pgx.QueryExecModeSimpleProtocol, f.user).Scan(&f.keyID, &f.keyHash); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT DISTINCT space_id FROM entries WHERE deleted AND updated_at < $1 ORDER BY 1`,
		pgx.QueryExecModeSimpleProtocol, f.cutoff)
	if err != nil {
		t.Fatal(err)
	}
	if f.purgeSpaces, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil || len(f.purgeSpaces) == 0 {
		t.Fatalf("no tombstones past retention to purge: %v", err)
	}
	return f
}

// explainExercise calls every Store method once, so that the driver
// prepares each of its statements on the pool's one connection.
func explainExercise(t *testing.T, db *postgres.DB, f explainFixture) {
	t.Helper()
	ctx := t.Context()
	must := func(what string, err error) {
		t.Helper()
		if err != nil && teammem.ErrorCode(err) != teammem.ENotFound {
			t.Fatalf("%s: %v", what, err)
		}
	}
	must("Ping", db.Ping(ctx))
	_, err := db.OrgGet(ctx, f.org)
	must("OrgGet", err)
	_, err = db.OrgGetBySlug(ctx, "org-1")
	must("OrgGetBySlug", err)
	_, err = db.OrgList(ctx)
	must("OrgList", err)
	_, err = db.OrgCount(ctx)
	must("OrgCount", err)
	name := "Renamed"
	_, err = db.OrgUpdate(ctx, f.org, teammem.OrgUpdateParams{Name: &name})
	must("OrgUpdate", err)
	newOrg, err := db.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "explain", Name: "Explain"})
	must("OrgCreate", err)

	user, err := db.UserCreate(ctx, f.org, teammem.UserCreateParams{Handle: "explainer", Role: teammem.RoleMember})
	must("UserCreate", err)
	_, err = db.UserGet(ctx, f.org, f.user)
	must("UserGet", err)
	_, err = db.UserGetByHandle(ctx, f.org, "user-2")
	must("UserGetByHandle", err)
	_, err = db.UserList(ctx, f.org)
	must("UserList", err)
	role := teammem.RoleAdmin
	_, err = db.UserUpdate(ctx, f.org, user.ID, teammem.UserUpdateParams{Role: &role})
	must("UserUpdate", err)

	key, err := db.KeyCreate(ctx, f.org, teammem.KeyCreateParams{UserID: user.ID, Name: "k", Prefix: "p", Hash: teammem.HashKey("explain-key")})
	must("KeyCreate", err)
	_, err = db.KeyLookup(ctx, f.keyHash)
	must("KeyLookup", err)
	_, err = db.KeyList(ctx, f.org, teammem.KeyFilter{})
	must("KeyList", err)
	_, err = db.KeyRevoke(ctx, f.org, key.ID, time.Now())
	must("KeyRevoke", err)
	must("KeysTouch", db.KeysTouch(ctx, map[string]time.Time{f.keyID: time.Now()}))

	_, err = db.RepoGet(ctx, f.org, f.repoSlug)
	must("RepoGet", err)
	repo, err := db.RepoEnsure(ctx, f.org, "owner/explain")
	must("RepoEnsure", err)
	_, err = db.RepoList(ctx, f.org)
	must("RepoList", err)
	_, err = db.SpaceGet(ctx, f.org, teammem.SpaceRef{RepoID: f.repo, Scope: teammem.ScopeTeam})
	must("SpaceGet", err)
	_, err = db.SpaceEnsure(ctx, f.org, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopePersonal, UserID: user.ID})
	must("SpaceEnsure", err)
	_, err = db.SpaceList(ctx)
	must("SpaceList", err)
	_, err = teammem.SpaceApply(ctx, db, f.org, f.space, teammem.ApplyParams{Actor: teammem.Actor{UserID: f.user, ClientID: "explain"}, Plan: func(_ teammem.Space, _ map[string]teammem.Entry, current func(string) (string, error)) ([]teammem.EntryChange, error) {
		if _, err := current(f.entryKey); err != nil {
			return nil, err
		}
		return []teammem.EntryChange{{Key: "notes/new.md", Op: teammem.OpWrite, Content: "new"},
			{Key: "notes/topic-4.md", Op: teammem.OpDelete}}, nil
	}})
	must("SpaceApply", err)

	_, err = db.EntriesList(ctx, f.org, f.space, false)
	must("EntriesList", err)
	_, err = db.EntriesList(ctx, f.org, f.space, true)
	must("EntriesList with content", err)
	_, err = db.EntryGet(ctx, f.org, f.space, f.entryKey)
	must("EntryGet", err)
	_, err = db.EntryHeads(ctx, f.org, f.space)
	must("EntryHeads", err)
	_, err = db.ChangesList(ctx, f.org, f.space, 8)
	must("ChangesList", err)
	_, err = db.EntryHistory(ctx, f.org, f.space, f.entryKey)
	must("EntryHistory", err)
	_, err = db.EntryVersionGet(ctx, f.org, f.space, f.entryKey, 5)
	must("EntryVersionGet", err)
	_, err = db.TombstonesPurge(ctx, f.cutoff)
	must("TombstonesPurge", err)

	_, _, err = db.VersionRedact(ctx, f.org, f.space, teammem.VersionRedactParams{Key: "notes/topic-10.md", Version: 19, By: f.user, At: time.Now()})
	must("VersionRedact", err)
	_, err = db.VersionsPurge(ctx, f.org, teammem.VersionsPurgeParams{Before: f.cutoff, MaxPerKey: 1})
	must("VersionsPurge", err)
	_, err = db.SpaceVersionsPurge(ctx, f.org, f.space)
	must("SpaceVersionsPurge", err)
	must("HistoryScrub", db.HistoryScrub(ctx))

	must("AuditAppend", db.AuditAppend(ctx, newOrg.ID, teammem.AuditEvent{ActorID: 0, Action: "explain"}))
	_, err = db.AuditList(ctx, f.org, teammem.AuditFilter{})
	must("AuditList", err)
}

// explainQuery is a hot query: how to find its statement and the
// parameters to explain it with (each list once).
type explainQuery struct {
	name     string
	contains []string // fragments of its normalized text, all required
	suffix   string   // how its normalized text ends, when fragments are not enough
	args     [][]any
}

// explainHotQueries are the queries on the paths every sync takes, plus the
// background ones that scan by time, with parameters from f.
func explainHotQueries(f explainFixture) []explainQuery {
	entries := `FROM entries e LEFT JOIN users u ON u.id = e.author_id WHERE e.org_id = $1 AND e.space_id = $2`
	versions := `FROM entry_versions v LEFT JOIN users u ON u.id = v.author_id WHERE v.org_id = $1 AND v.space_id = $2 AND v.key = $3`
	space := []any{f.org, f.space}
	return []explainQuery{
		{name: "key lookup by hash", contains: []string{`JOIN orgs o ON o.id = k.org_id WHERE k.key_hash = $1`}, args: [][]any{{f.keyHash}}},
		{name: "repo by org and slug", contains: []string{`FROM repos WHERE org_id = $1 AND slug = $2`}, args: [][]any{{f.org, f.repoSlug}}},
		{name: "space by ref", contains: []string{`FROM spaces WHERE org_id = $1 AND repo_id = $2 AND scope = $3 AND coalesce(user_id, 0) = $4`},
			args: [][]any{{f.org, f.repo, "team", 0}, {f.org, f.repo, "personal", f.user}}},
		{name: "space for update", contains: []string{`FROM spaces WHERE org_id = $1 AND id = $2 FOR UPDATE`}, args: [][]any{space}},
		{name: "entry heads of a space", suffix: ` FROM entries e WHERE e.org_id = $1 AND e.space_id = $2`, args: [][]any{space}},
		{name: "entries list", contains: []string{`e.memory_id, e.memory_created_at ` + entries + ` AND NOT e.deleted ORDER BY e.key COLLATE "C"`}, args: [][]any{space}},
		{name: "entries list with content", contains: []string{`e.content ` + entries + ` AND NOT e.deleted ORDER BY e.key COLLATE "C"`}, args: [][]any{space}},
		{name: "entry get", contains: []string{entries + ` AND e.key = $3 AND NOT e.deleted`}, args: [][]any{{f.org, f.space, f.entryKey}}},
		{name: "entry content under the write lock", contains: []string{`SELECT content FROM entries WHERE org_id = $1 AND space_id = $2 AND key = $3 AND NOT deleted`},
			args: [][]any{{f.org, f.space, f.entryKey}}},
		{name: "changes since a version", contains: []string{entries + ` AND e.version > $3`}, args: [][]any{{f.org, f.space, 8}}},
		{name: "entry history", contains: []string{versions + ` ORDER BY v.version DESC`}, args: [][]any{{f.org, f.space, f.entryKey}}},
		{name: "entry version get", contains: []string{versions + ` AND v.version = $4`}, args: [][]any{{f.org, f.space, f.entryKey, 5}}},
		{name: "space head update", contains: []string{`UPDATE spaces SET version = $1`}, args: [][]any{{25, "sha256:x", 11, 3520, time.Now(), f.org, f.space}}},
		{name: "audit list", contains: []string{`FROM audit_events a LEFT JOIN users u ON u.id = a.actor_id WHERE a.org_id = $1`},
			args: [][]any{{f.org, 0, "", "", 0, 100}, {f.org, f.user, f.repoSlug, "push.rejected", 1_000_000, 50}}},
		{name: "tombstone purge: spaces to lock", contains: []string{`SELECT space_id FROM entries WHERE deleted AND updated_at < $1`}, args: [][]any{{f.cutoff}}},
		{name: "tombstone purge: delete", contains: []string{`DELETE FROM entries WHERE space_id = ANY($2) AND deleted AND updated_at < $1`},
			args: [][]any{{f.cutoff, f.purgeSpaces}}},
		{name: "history purge: aged versions", contains: []string{`WHERE v.org_id = $1 AND v.created_at < $2 AND (v.created_at, v.id) > ($3, $4)`},
			args: [][]any{{f.org, f.cutoff, time.Time{}, 0, 1000}, {f.org, time.Now(), time.Now().Add(-time.Hour), 1_000_000, 1000}}},
		{name: "history purge: crowded entries", contains: []string{`CROSS JOIN LATERAL`}, args: [][]any{{f.org, 1}, {f.org, 100}}},
		{name: "key list", contains: []string{`FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.org_id = $1`}, args: [][]any{{f.org, 0}, {f.org, f.user}}},
		{name: "key touch", contains: []string{`UPDATE api_keys SET last_used_at`}, args: [][]any{{time.Now(), f.keyID}}},
		{name: "repo list", contains: []string{`FROM repos r LEFT JOIN spaces s`}, args: [][]any{{f.org}}},
	}
}

// preparedStatement is one statement pgx prepared on the connection.
type preparedStatement struct {
	name, sql string
	types     []string // parameter types
}

var spaces = regexp.MustCompile(`\s+`)

func normalizeSQL(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

// explainStatements returns the statements prepared in conn's session,
// except the test's own and golang-migrate's.
func explainStatements(t *testing.T, conn *pgx.Conn) []preparedStatement {
	t.Helper()
	rows, err := conn.Query(t.Context(), `SELECT name, statement, parameter_types::text[] FROM pg_prepared_statements ORDER BY statement`,
		pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var out []preparedStatement
	var s preparedStatement
	_, err = pgx.ForEachRow(rows, []any{&s.name, &s.sql, &s.types}, func() error {
		sql := normalizeSQL(s.sql)
		if !strings.Contains(sql, "schema_migrations") && !strings.Contains(sql, "pg_advisory") &&
			!strings.Contains(sql, "information_schema") && !strings.HasPrefix(sql, "SELECT CURRENT_") &&
			!strings.Contains(sql, "pg_prepared_statements") {
			out = append(out, preparedStatement{name: s.name, sql: sql, types: slices.Clone(s.types)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// find returns the one prepared statement q describes.
func (q explainQuery) find(t *testing.T, stmts []preparedStatement) preparedStatement {
	t.Helper()
	var found []preparedStatement
	for _, s := range stmts {
		ok := q.suffix == "" || strings.HasSuffix(s.sql, normalizeSQL(q.suffix))
		for _, c := range q.contains {
			ok = ok && strings.Contains(s.sql, normalizeSQL(c))
		}
		if ok {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d prepared statements match %q (%v, suffix %q): the driver's SQL changed, or it no longer prepares "+
			"statements (pgx's default exec mode); update this test", len(found), q.name, q.contains, q.suffix)
	}
	return found[0]
}

// explainPlan explains s under the given plan_cache_mode, with args or, for
// a generic plan, NULLs.
func explainPlan(t *testing.T, conn *pgx.Conn, s preparedStatement, mode string, args []any) map[string]any {
	t.Helper()
	ctx := t.Context()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	if args != nil && len(args) != len(s.types) {
		t.Fatalf("%d arguments for a statement of %d parameters: %s", len(args), len(s.types), s.sql)
	}
	// EXPLAIN is a utility statement: Postgres takes no bind parameters
	// for it, so the arguments are written as typed literals.
	params := make([]string, len(s.types))
	for i, typ := range s.types {
		params[i] = "NULL::" + typ
		if args != nil {
			params[i] = sqlLiteral(t, args[i]) + "::" + typ
		}
	}
	q := "EXPLAIN (FORMAT JSON) EXECUTE " + pgx.Identifier{s.name}.Sanitize()
	if len(params) > 0 {
		q += "(" + strings.Join(params, ", ") + ")"
	}
	var out string
	if err := conn.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&out); err != nil {
		t.Fatalf("explain %s: %v", s.sql, err)
	}
	var plans []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := json.Unmarshal([]byte(out), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("explain output %q: %v", out, err)
	}
	return plans[0].Plan
}

// checkNoSeqScan fails when plan reads a big table with a Seq Scan and the
// statement is not in seqScanAllowed.
func checkNoSeqScan(t *testing.T, what, sql string, plan map[string]any) {
	t.Helper()
	var nodes []string
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		typ, _ := n["Node Type"].(string)
		rel, _ := n["Relation Name"].(string)
		nodes = append(nodes, strings.TrimSpace(typ+" "+rel))
		if typ == "Seq Scan" && slices.Contains(bigTables, rel) {
			if reason, ok := allowedSeqScan(sql); ok {
				t.Logf("%s: Seq Scan on %s allowed: %s", what, rel, reason)
			} else {
				t.Errorf("%s: Seq Scan on %s in\n%s", what, rel, sql)
			}
		}
		children, _ := n["Plans"].([]any)
		for _, c := range children {
			if m, ok := c.(map[string]any); ok {
				walk(m)
			}
		}
	}
	walk(plan)
	t.Logf("%s: %s", what, strings.Join(nodes, " > "))
}

// sqlLiteral writes v as an SQL literal for explainPlan.
func sqlLiteral(t *testing.T, v any) string {
	t.Helper()
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch x := v.(type) {
	case int, int64:
		return fmt.Sprint(x)
	case string:
		return quote(x)
	case []byte:
		return quote(fmt.Sprintf("\\x%x", x))
	case time.Time:
		return quote(x.UTC().Format(time.RFC3339Nano))
	case []int64:
		ids := make([]string, len(x))
		for i, id := range x {
			ids[i] = fmt.Sprint(id)
		}
		return quote("{" + strings.Join(ids, ",") + "}")
	}
	t.Fatalf("no SQL literal for %T", v)
	return ""
}

func allowedSeqScan(sql string) (string, bool) {
	for frag, reason := range seqScanAllowed {
		if strings.Contains(sql, frag) {
			return reason, true
		}
	}
	return "", false
}
