package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/testing/testpg"
	"github.com/teammem/teammem/migrations"
)

// schema is what the parity test compares of a database, each fact one
// line, so that a difference reads as the lines one dialect has and the
// other lacks. Names of explicit indexes are compared; a unique constraint
// is compared by its columns, since each dialect names its own.
type schema map[string]bool

// dialectType maps each dialect's column type to the one kind both store:
// SQLite keeps timestamps as integer microseconds and booleans as 0 or 1,
// so Postgres's bigint, integer, boolean and timestamptz are all INTEGER.
var dialectType = map[string]string{
	// SQLite's declared types.
	"INTEGER": "INTEGER", "TEXT": "TEXT", "BLOB": "BLOB", "REAL": "REAL",
	// Postgres's, as information_schema spells them.
	"bigint": "INTEGER", "integer": "INTEGER", "smallint": "INTEGER", "boolean": "INTEGER",
	"timestamp with time zone": "INTEGER",
	"text":                     "TEXT", "jsonb": "TEXT", "json": "TEXT", "character varying": "TEXT", "uuid": "TEXT",
	"bytea":            "BLOB",
	"double precision": "REAL", "real": "REAL",
}

// allowed lists the differences the dialects keep on purpose, each line
// as the test prints it, with the reason. A line here that the dialects no
// longer differ by fails the test too, so the list cannot go stale.
var allowed = map[string]string{
	// SQLite's partial index leads with the column its WHERE fixes, which
	// adds nothing but a constant; both serve the tombstone purge alike.
	"postgres only: index entries_tombstones on entries (updated_at) unique=false partial=true":        "same purge index",
	"sqlite only: index entries_tombstones on entries (deleted, updated_at) unique=false partial=true": "same purge index",
	// Search is each driver's own full-text engine (migration 0015):
	// Postgres keeps a tsvector column of entries and its GIN index,
	// SQLite the tables searchTable names.
	"postgres only: column entries.search unmapped tsvector null=true":                   "full-text search",
	"postgres only: index entries_search on entries (search) unique=false partial=false": "full-text search",
	// SQLite's entries is a rowid table (migration 0016): this index lets
	// it read a space's heads without reading content; a Postgres heap row
	// keeps large content out of line by itself.
	"sqlite only: index entries_heads on entries (space_id, org_id, key, checksum, size, version, deleted, author_id, client_id, updated_at, memory_id, memory_created_at) unique=false partial=false": "heads without content",
}

// TestDialectsMigrateAlike runs both dialects' migrations to the latest
// version, SQLite on a real file and Postgres on a fresh database, and
// compares the schemas they leave: tables, columns (name, type through
// dialectType, nullability, primary key), indexes (name, uniqueness,
// columns, partial or not), unique constraints, foreign keys (columns,
// target, ON DELETE) and checks (how many per table, and the literals they
// name, which both dialects keep verbatim).
func TestDialectsMigrateAlike(t *testing.T) {
	ctx := t.Context()
	lite := sqliteSchema(t, ctx, filepath.Join(t.TempDir(), "parity.db"))
	pg := postgresSchema(t, ctx, testpg.NewDatabase(t))

	left := map[string]bool{}
	for line := range lite {
		if !pg[line] {
			left["sqlite only: "+line] = true
		}
	}
	for line := range pg {
		if !lite[line] {
			left["postgres only: "+line] = true
		}
	}
	var diffs []string
	for line := range left {
		if _, ok := allowed[line]; !ok {
			diffs = append(diffs, line)
		}
	}
	for line := range allowed {
		if !left[line] {
			diffs = append(diffs, "allowed but no longer different: "+line)
		}
	}
	slices.Sort(diffs)
	if testing.Verbose() {
		for _, line := range slices.Sorted(maps.Keys(lite)) {
			t.Log(line)
		}
	}
	for _, d := range diffs {
		t.Error(d)
	}
	if len(lite) < 50 {
		t.Fatalf("the SQLite schema has only %d facts; the introspection is broken", len(lite))
	}
}

// TestDialectsListSameVersions checks what embed.go promises: both dialects
// number their migrations identically, each with an up and a down file.
func TestDialectsListSameVersions(t *testing.T) {
	names := func(dir string) []string {
		files, err := fs.Glob(migrations.FS, dir+"/*.sql")
		if err != nil {
			t.Fatal(err)
		}
		for i, f := range files {
			files[i] = strings.TrimPrefix(f, dir+"/")
		}
		return files
	}
	lite, pg := names("sqlite"), names("postgres")
	if !slices.Equal(lite, pg) {
		t.Errorf("the dialects' migration files differ:\nsqlite:   %v\npostgres: %v", lite, pg)
	}
}

// ignoredTable is bookkeeping of a dialect or of the migration tool, or
// one dialect's search engine.
func ignoredTable(name string) bool {
	return name == "schema_migrations" || strings.HasPrefix(name, "sqlite_") || searchTable(name)
}

// searchTable is one of SQLite's search tables: FTS5's virtual table and
// its shadow tables, and the rowids it indexes by.
func searchTable(name string) bool {
	return name == "entry_search" || strings.HasPrefix(name, "entry_fts")
}

var literalRE = regexp.MustCompile(`'((?:[^']|'')*)'`)

// checkFacts are a table's checks as comparable lines: their count and
// the sorted literals they name.
func checkFacts(s schema, table string, defs []string) {
	if len(defs) == 0 {
		return
	}
	var lits []string
	for _, d := range defs {
		for _, m := range literalRE.FindAllStringSubmatch(d, -1) {
			lits = append(lits, m[1])
		}
	}
	slices.Sort(lits)
	s[fmt.Sprintf("check %s: %d, literals %s", table, len(defs), strings.Join(lits, ","))] = true
}

func sqliteSchema(t *testing.T, ctx context.Context, path string) schema {
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	strs := func(query string, args ...any) [][]string {
		t.Helper()
		rows, err := db.QueryContext(ctx, query, args...)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out [][]string
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			row := make([]string, len(cols))
			for i, v := range vals {
				row[i] = v.String
			}
			out = append(out, row)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	s := schema{}
	for _, tr := range strs(`SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name`) {
		table, ddl := tr[0], tr[1]
		if ignoredTable(table) {
			continue
		}
		s["table "+table] = true
		// cid, name, type, notnull, dflt_value, pk
		pk := map[int]string{}
		for _, c := range strs(`SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, table) {
			typ := dialectType[strings.ToUpper(c[1])]
			if typ == "" {
				typ = "unmapped " + c[1]
			}
			notNull := c[2] == "1" || c[3] != "0" // a primary key is never null
			s[fmt.Sprintf("column %s.%s %s null=%v", table, c[0], typ, !notNull)] = true
			if c[3] != "0" {
				n, _ := strconv.Atoi(c[3])
				pk[n] = c[0]
			}
		}
		if len(pk) > 0 {
			var cols []string
			for i := 1; i <= len(pk); i++ {
				cols = append(cols, pk[i])
			}
			s[fmt.Sprintf("primary key %s (%s)", table, strings.Join(cols, ", "))] = true
		}
		// seq, name, unique, origin (c: CREATE INDEX, u: UNIQUE, pk), partial
		for _, ix := range strs(`SELECT name, "unique", origin, partial FROM pragma_index_list(?)`, table) {
			var cols []string
			for _, c := range strs(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`, ix[0]) {
				cols = append(cols, orDefault(c[0], "<expr>"))
			}
			switch ix[2] {
			case "pk":
			case "u":
				s[fmt.Sprintf("unique %s (%s)", table, strings.Join(cols, ", "))] = true
			default:
				s[fmt.Sprintf("index %s on %s (%s) unique=%v partial=%v", ix[0], table, strings.Join(cols, ", "), ix[1] == "1", ix[3] == "1")] = true
			}
		}
		// id, seq, table, from, to, on_update, on_delete, match
		fks := map[string][]string{}
		for _, fk := range strs(`SELECT id, "table", "from", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq`, table) {
			f := fks[fk[0]]
			if f == nil {
				f = []string{fk[1], fk[4], "", ""}
			}
			f[2] += "," + fk[2]
			f[3] += "," + orDefault(fk[3], "id") // REFERENCES t alone means t's primary key, which is id
			fks[fk[0]] = f
		}
		for _, f := range fks {
			s[fmt.Sprintf("foreign key %s (%s) -> %s (%s) on delete %s", table, f[2][1:], f[0], f[3][1:], f[1])] = true
		}
		checkFacts(s, table, sqliteChecks(ddl))
	}
	return s
}

// orDefault is v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// sqliteChecks returns the CHECK clauses of a CREATE TABLE statement, which
// SQLite keeps only as text (ALTER TABLE ADD COLUMN appends to it).
func sqliteChecks(ddl string) []string {
	var out []string
	up := strings.ToUpper(ddl)
	for i := 0; ; {
		j := strings.Index(up[i:], "CHECK")
		if j < 0 {
			return out
		}
		i += j + len("CHECK")
		k := strings.Index(ddl[i:], "(")
		if k < 0 || strings.TrimSpace(ddl[i:i+k]) != "" {
			continue
		}
		depth, start := 0, i+k
		for e := start; e < len(ddl); e++ {
			switch ddl[e] {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				out = append(out, ddl[start:e+1])
				i = e + 1
				break
			}
		}
	}
}

func postgresSchema(t *testing.T, ctx context.Context, dsn string) schema {
	db, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pool := db.Pool()
	s := schema{}
	rows := func(query string, scan func(scan func(...any) error)) {
		t.Helper()
		r, err := pool.Query(ctx, query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer r.Close()
		for r.Next() {
			scan(r.Scan)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
	}
	rows(`SELECT table_name, column_name, data_type, is_nullable = 'YES' FROM information_schema.columns
		WHERE table_schema = current_schema()`, func(scan func(...any) error) {
		var table, col, typ string
		var null bool
		if err := scan(&table, &col, &typ, &null); err != nil {
			t.Fatal(err)
		}
		if ignoredTable(table) {
			return
		}
		s["table "+table] = true
		mapped := dialectType[typ]
		if mapped == "" {
			mapped = "unmapped " + typ
		}
		s[fmt.Sprintf("column %s.%s %s null=%v", table, col, mapped, null)] = true
	})
	const cols = `array(SELECT coalesce(a.attname::text, '<expr>') FROM unnest(%s) WITH ORDINALITY u(k, n)
		LEFT JOIN pg_attribute a ON a.attrelid = %s AND a.attnum = u.k ORDER BY u.n)::text[]`
	rows(`SELECT t.relname, i.relname, ix.indisunique, ix.indisprimary, ix.indpred IS NOT NULL, coalesce(con.contype::text, ''),
		`+fmt.Sprintf(cols, "ix.indkey::int2[]", "t.oid")+`
		FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid JOIN pg_class t ON t.oid = ix.indrelid
		JOIN pg_namespace ns ON ns.oid = t.relnamespace
		LEFT JOIN pg_constraint con ON con.conindid = ix.indexrelid AND con.contype IN ('p', 'u')
		WHERE ns.nspname = current_schema()`, func(scan func(...any) error) {
		var table, name, con string
		var unique, primary, partial bool
		var columns []string
		if err := scan(&table, &name, &unique, &primary, &partial, &con, &columns); err != nil {
			t.Fatal(err)
		}
		switch {
		case ignoredTable(table):
		case primary:
			s[fmt.Sprintf("primary key %s (%s)", table, strings.Join(columns, ", "))] = true
		case con == "u":
			s[fmt.Sprintf("unique %s (%s)", table, strings.Join(columns, ", "))] = true
		default:
			s[fmt.Sprintf("index %s on %s (%s) unique=%v partial=%v", name, table, strings.Join(columns, ", "), unique, partial)] = true
		}
	})
	onDelete := map[string]string{"a": "NO ACTION", "r": "RESTRICT", "c": "CASCADE", "n": "SET NULL", "d": "SET DEFAULT"}
	rows(`SELECT t.relname, r.relname, `+fmt.Sprintf(cols, "c.conkey", "c.conrelid")+`, `+fmt.Sprintf(cols, "c.confkey", "c.confrelid")+`, c.confdeltype::text
		FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
		JOIN pg_namespace ns ON ns.oid = t.relnamespace
		WHERE c.contype = 'f' AND ns.nspname = current_schema()`, func(scan func(...any) error) {
		var table, target, del string
		var from, to []string
		if err := scan(&table, &target, &from, &to, &del); err != nil {
			t.Fatal(err)
		}
		s[fmt.Sprintf("foreign key %s (%s) -> %s (%s) on delete %s", table, strings.Join(from, ","), target, strings.Join(to, ","), onDelete[del])] = true
	})
	checks := map[string][]string{}
	rows(`SELECT t.relname, pg_get_constraintdef(c.oid) FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
		JOIN pg_namespace ns ON ns.oid = t.relnamespace
		WHERE c.contype = 'c' AND ns.nspname = current_schema()`, func(scan func(...any) error) {
		var table, def string
		if err := scan(&table, &def); err != nil {
			t.Fatal(err)
		}
		checks[table] = append(checks[table], def)
	})
	for table, defs := range checks {
		checkFacts(s, table, defs)
	}
	return s
}
