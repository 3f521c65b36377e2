package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// localPG is the Postgres server tried when none is configured.
const localPG = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// pgAdmin creates and drops the bench's databases on one Postgres server.
type pgAdmin struct {
	admin *url.URL
	made  []string
}

// findPG returns an admin for the server named by --pg-url, else
// TEAMMEM_TEST_DATABASE_URL, else localPG, or an error saying why there is
// none (the Postgres part of the run is then skipped).
func findPG(ctx context.Context, flagURL string) (*pgAdmin, error) {
	raw := flagURL
	if raw == "" {
		raw = strings.TrimSpace(os.Getenv("TEAMMEM_TEST_DATABASE_URL"))
	}
	if raw == "" {
		raw = localPG
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("Postgres URL %q is not a postgres:// URL", u.Redacted())
	}
	if strings.Trim(u.Path, "/") == "" {
		u.Path = "/postgres"
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("Postgres at %s does not answer: %w", u.Redacted(), err)
	}
	conn.Close(ctx)
	return &pgAdmin{admin: u}, nil
}

// create makes a fresh database and returns its URL.
func (a *pgAdmin) create(ctx context.Context, what string) (string, error) {
	var b [6]byte
	rand.Read(b[:])
	name := "teammem_bench_" + what + "_" + hex.EncodeToString(b[:])
	if err := a.exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	a.made = append(a.made, name)
	u := *a.admin
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), nil
}

// dropAll drops every database create made, ending leftover sessions.
func (a *pgAdmin) dropAll() {
	for _, name := range a.made {
		if err := a.exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			logf("could not drop database %s; drop it by hand: %v", name, err)
		}
	}
	a.made = nil
}

func (a *pgAdmin) exec(ctx context.Context, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, a.admin.String())
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
