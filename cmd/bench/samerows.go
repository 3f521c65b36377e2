package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
)

// sqliteSameRows is the SQLite baseline that stores exactly what a teammem
// delta push stores, where it stores it: a database made by the store
// (its migrations: tables, indexes, pragmas), filled as the push repos
// are, then written with the store's own statements (sqlite.WriteSQL) on
// one writer connection — lock the head, upsert the entry, insert its
// version, store the head. What it leaves out is teammem's own work: HTTP,
// authentication, the key and size checks, the secret scan, the poisoning
// checks, the plan and the space checksum.
//
// It checkpoints as the store does: PASSIVE checkpoints on a connection of
// their own once about SQLite's default auto-checkpoint (1000 pages) was
// committed, so its WAL stays as small as the store's.
type sqliteSameRows struct {
	db, ckpt *sql.DB
	// The statements, prepared once on the writer connection, as the
	// store prepares its own.
	lock, upsert, version, head *sql.Stmt
	org                         int64
	spaces                      []int64
	memIDs                      []string // each space's memory id of pushKey
	pending                     atomic.Int64
	wake                        chan struct{}
	done                        sync.WaitGroup
}

// sameRowsCheckpointBytes is what wakes the checkpointer, and sameRowsTurnBytes
// what a push is counted for: its content twice (entry and version) and
// its b-tree pages and head.
const (
	sameRowsCheckpointBytes = 1000 * 4096
	sameRowsTurnBytes       = 16 << 10
)

// openSQLiteSameRows makes the store's database in dir with spaces push
// spaces of pullEntries entries each (and pushKey), then opens it raw.
func openSQLiteSameRows(ctx context.Context, dir string, spaces int) (*sqliteSameRows, error) {
	path := filepath.Join(dir, "same-rows.db")
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	r := &sqliteSameRows{}
	err = func() error {
		defer st.Close()
		org, err := st.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "acme", Name: "Acme"})
		if err != nil {
			return err
		}
		r.org = org.ID
		w := &teammem.Writer{Store: st, Defaults: teammem.DefaultServerDefaults}
		owner := teammem.Principal{Org: org, User: teammem.User{Role: teammem.RoleOwner}}
		for conn := range spaces {
			repo, err := st.RepoEnsure(ctx, org.ID, pushRepo(conn))
			if err != nil {
				return err
			}
			sp, err := st.SpaceEnsure(ctx, org.ID, teammem.SpaceRef{RepoID: repo.ID, Scope: teammem.ScopeTeam})
			if err != nil {
				return err
			}
			var req teammem.WriteRequest
			for k, v := range memoryEntries(pullEntries) {
				req.Upserts = append(req.Upserts, teammem.Upsert{Key: k, Content: v})
			}
			req.Upserts = append(req.Upserts, teammem.Upsert{Key: pushKey, Content: prose(uint64(conn), entryBytes)})
			if _, err := w.Write(ctx, teammem.WriteCall{Principal: owner, Repo: repo.Slug, Scope: teammem.ScopeTeam,
				Request: req}); err != nil {
				return err
			}
			e, err := st.EntryGet(ctx, org.ID, sp.ID, pushKey)
			if err != nil {
				return err
			}
			r.spaces, r.memIDs = append(r.spaces, sp.ID), append(r.memIDs, e.MemoryID)
		}
		return nil
	}()
	if err != nil {
		return nil, fmt.Errorf("set up the same-rows push baseline: %w", err)
	}
	q := url.Values{"_txlock": {"immediate"}}
	for _, p := range storePragmas {
		q.Add("_pragma", p)
	}
	for _, db := range []**sql.DB{&r.db, &r.ckpt} {
		if *db, err = sql.Open("sqlite", "file:"+path+"?"+q.Encode()); err != nil {
			return nil, err
		}
		(*db).SetMaxOpenConns(1)
	}
	for _, st := range []struct {
		to  **sql.Stmt
		sql string
	}{{&r.lock, sqlite.WriteSQL.Lock}, {&r.upsert, sqlite.WriteSQL.Upsert}, {&r.version, sqlite.WriteSQL.Version}, {&r.head, sqlite.WriteSQL.Head}} {
		if *st.to, err = r.db.PrepareContext(ctx, st.sql); err != nil {
			return nil, err
		}
	}
	r.wake = make(chan struct{}, 1)
	r.done.Go(func() {
		for range r.wake {
			r.pending.Store(0)
			_, _ = r.ckpt.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
		}
	})
	return r, nil
}

func (r *sqliteSameRows) push(ctx context.Context, conn int, content string) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	space := r.spaces[conn]
	// The head as the store reads it: every column scanned, the version
	// (the sixth, after id, org_id, repo_id, scope and user_id) kept.
	rows, err := tx.StmtContext(ctx, r.lock).QueryContext(ctx, r.org, space)
	if err != nil {
		return err
	}
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	for i := range vals {
		vals[i] = new(any)
	}
	if !rows.Next() {
		rows.Close()
		return fmt.Errorf("space %d: no head", space)
	}
	err = rows.Scan(vals...)
	rows.Close()
	if err != nil {
		return err
	}
	version, ok := (*vals[5].(*any)).(int64)
	if !ok {
		return fmt.Errorf("space %d: head version %v", space, *vals[5].(*any))
	}
	version++
	sum, at := teammem.EntryChecksum(content), time.Now().UnixMicro()
	if _, err := tx.StmtContext(ctx, r.upsert).ExecContext(ctx, r.org, space, pushKey, content, sum, len(content), version,
		false, nil, "bench", at, r.memIDs[conn], false); err != nil {
		return err
	}
	if _, err := tx.StmtContext(ctx, r.version).ExecContext(ctx, r.org, space, pushKey, version, teammem.OpWrite, sum, len(content),
		content, nil, "bench", at, r.memIDs[conn], int64(0), "claude_code", "", teammem.EncodeFindings(nil)); err != nil {
		return err
	}
	if _, err := tx.StmtContext(ctx, r.head).ExecContext(ctx, version, sum, pullEntries+1, 0, at, r.org, space); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if r.pending.Add(2*int64(len(content))+sameRowsTurnBytes) >= sameRowsCheckpointBytes {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

func (r *sqliteSameRows) close() {
	close(r.wake)
	r.done.Wait()
	r.ckpt.Close()
	r.db.Close()
}
