package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/testpg"
)

// rawDB reads a store's tables behind its back, to prove what the API
// says is gone is gone from the rows (and, for SQLite, from the files).
type rawDB struct {
	// texts returns the first column of every row of query, as text.
	texts func(t *testing.T, query string) []string
	// files, for SQLite, returns which of the database's files (the
	// database, its WAL, its shared-memory index) contain b; nil for
	// Postgres, whose files are the server's.
	files func(t *testing.T, b string) []string
}

// forRawDrivers runs fn on SQLite and Postgres, with raw access to each.
func forRawDrivers(t *testing.T, fn func(t *testing.T, st teammem.Store, raw rawDB)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "t.db")
		db, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db, rawDB{texts: sqliteTexts(path), files: filesHolding(path)})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn := testpg.NewDatabase(t)
		db, err := postgres.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		fn(t, db, rawDB{texts: pgTexts(dsn)})
	})
}

// sqliteTexts reads through a read-only connection of its own, closed
// after each query so it never holds the WAL against a checkpoint.
func sqliteTexts(path string) func(t *testing.T, query string) []string {
	return func(t *testing.T, query string) []string {
		t.Helper()
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.QueryContext(t.Context(), query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s sql.NullString
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s.String)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
}

func pgTexts(dsn string) func(t *testing.T, query string) []string {
	return func(t *testing.T, query string) []string {
		t.Helper()
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, query)
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (string, error) {
			var s *string
			err := r.Scan(&s)
			if s == nil {
				return "", err
			}
			return *s, err
		})
		if err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return out
	}
}

func filesHolding(path string) func(t *testing.T, m string) []string {
	return func(t *testing.T, m string) []string {
		t.Helper()
		var found []string
		for _, suffix := range []string{"", "-wal", "-shm"} {
			b, err := os.ReadFile(path + suffix)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(m)) {
				found = append(found, filepath.Base(path+suffix))
			}
		}
		return found
	}
}

// eraseMarker returns a string found nowhere else and content of about n
// bytes that holds it (a large n spills the row onto overflow pages in
// SQLite and into TOAST in Postgres, which are freed differently).
func eraseMarker(t *testing.T, n int) (string, string) {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	m := "ERASE-ME-" + hex.EncodeToString(b)
	return m, m + "\n" + strings.Repeat("leaked personal data "+m+"\n", n/(len(m)+23)+1)
}

// TestMemoryVersionRedactErasesBytes redacts versions through POST
// …/memory_versions/{id}/redact on both drivers and looks behind the API:
// the redacted content and its hash are in no row of any table that could
// hold them, and on SQLite in neither the database file nor its WAL once
// the redaction returned (it checkpoints). Small and large contents.
func TestMemoryVersionRedactErasesBytes(t *testing.T) {
	forRawDrivers(t, func(t *testing.T, st teammem.Store, raw rawDB) {
		e := newV1Env(t, st, nil)
		key := e.keys[teammem.RoleOwner]
		s := e.do("POST", "/v1/memory_stores?beta=true", key, map[string]any{"name": "erase"}).want(t, 200).JSON(t)
		base := "/v1/memory_stores/" + s["id"].(string)
		type leak struct{ marker, content, memID string }
		var leaks []leak
		for i, size := range []int{200, 30_000} {
			m, content := eraseMarker(t, size)
			path := "/leak" + itoa(i) + ".md"
			mem := e.do("POST", base+"/memories?beta=true", key, map[string]any{"path": path, "content": content}).want(t, 200).JSON(t)
			id := mem["id"].(string)
			// The live memory moves on: only its first version holds the marker.
			e.do("POST", base+"/memories/"+id+"?beta=true", key, map[string]any{"content": "nothing to see\n"}).want(t, 200)
			leaks = append(leaks, leak{marker: m, content: content, memID: id})
		}
		e.do("POST", base+"/memories?beta=true", key, map[string]any{"path": "/other.md", "content": "unrelated"}).want(t, 200)
		// The raw reads see the markers before: the searches below prove something.
		before := strings.Join(raw.texts(t, `SELECT content FROM entry_versions`), "\n")
		for _, l := range leaks {
			if !strings.Contains(before, l.marker) {
				t.Fatal("the marker is in no row before the redaction: the search proves nothing")
			}
		}
		if raw.files != nil {
			for _, l := range leaks {
				if got := raw.files(t, l.marker); len(got) == 0 {
					t.Fatal("the marker is in no file before the redaction: the search proves nothing")
				}
			}
		}
		for _, l := range leaks {
			vs := e.do("GET", base+"/memory_versions?beta=true&memory_id="+l.memID+"&operation=created", key, nil).want(t, 200).JSON(t)
			data := vs["data"].([]any)
			if len(data) != 1 {
				t.Fatalf("created versions of %s = %s", l.memID, jsonString(vs))
			}
			ver := data[0].(map[string]any)["id"].(string)
			red := e.do("POST", base+"/memory_versions/"+ver+"/redact?beta=true", key, nil).want(t, 200).JSON(t)
			for _, f := range []string{"content", "path", "content_sha256", "content_size_bytes"} {
				if red[f] != nil {
					t.Fatalf("redacted version's %s = %v", f, red[f])
				}
			}
			if red["redacted_at"] == nil || red["redacted_by"] == nil {
				t.Fatalf("redaction = %s", jsonString(red))
			}
			got := e.do("GET", base+"/memory_versions/"+ver+"?beta=true&view=full", key, nil).want(t, 200)
			if bytes.Contains(got.Body, []byte(l.marker)) || got.JSON(t)["content"] != nil {
				t.Fatalf("the redacted version still answers its content: %s", got.Body)
			}
		}

		// Behind the API: no row holds a marker or the redacted content's
		// hash, and the redacted rows say so.
		tables := []string{
			`SELECT content FROM entry_versions`, `SELECT checksum FROM entry_versions`,
			`SELECT content FROM entries`, `SELECT checksum FROM entries`,
			`SELECT CAST(details AS TEXT) FROM audit_events`, `SELECT target FROM audit_events`,
		}
		for _, q := range tables {
			for _, v := range raw.texts(t, q) {
				for _, l := range leaks {
					if strings.Contains(v, l.marker) || strings.Contains(v, sha(l.content)) {
						t.Fatalf("%s still holds the redacted content or its hash", q)
					}
				}
			}
		}
		redacted := raw.texts(t, `SELECT key FROM entry_versions WHERE redacted_at IS NOT NULL AND content IS NULL AND checksum = '' AND size = 0`)
		if len(redacted) != 2 || redacted[0] == redacted[1] {
			t.Fatalf("redacted rows = %v, want one per leak", redacted)
		}
		if raw.files != nil {
			for _, l := range leaks {
				for _, b := range []string{l.marker, sha(l.content)} {
					if got := raw.files(t, b); len(got) > 0 {
						t.Fatalf("after the redaction %q is still in %v", b, got)
					}
				}
			}
		}
		// Nothing else went: the live memories and the rest of the store.
		lines := ndjson(t, e.do("GET", base+"/memories/export", key, nil).want(t, 200).Body)
		if len(lines) != 5 || lines[4]["memory_count"] != 3.0 {
			t.Fatalf("export after redaction = %v", lines)
		}
	})
}
