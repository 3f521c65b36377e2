package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) teammem.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "teammem.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "teammem.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.OrgCreate(ctx, teammem.OrgCreateParams{Slug: "a", Name: "A"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, err := db.OrgCount(ctx); err != nil || n != 1 {
		t.Fatalf("OrgCount after reopen = %d, %v", n, err)
	}
}

func TestShared(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (teammem.Store, teammem.Store) {
		path := filepath.Join(t.TempDir(), "teammem.db")
		var dbs [2]teammem.Store
		for i := range dbs {
			db, err := sqlite.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			dbs[i] = db
		}
		return dbs[0], dbs[1]
	})
}
