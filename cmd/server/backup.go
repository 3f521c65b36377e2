package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/teammem/teammem/internal/server/store"
	"github.com/teammem/teammem/internal/server/store/postgres"
	"github.com/teammem/teammem/internal/server/store/sqlite"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/migrations"
)

// backupCmd is `teammem-server backup FILE`.
func backupCmd(r *storeRunner) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent snapshot of the database to FILE while the server serves",
		Long: "backup writes a consistent snapshot of the configured database to FILE: every write committed\n" +
			"before it began, nothing half-written. The server may keep serving meanwhile.\n\n" +
			"SQLite: one self-contained database file (VACUUM INTO), after any scrub an erasure still owes.\n" +
			"Postgres: a pg_dump archive in custom format (pg_dump must be on PATH and at least as new as the\n" +
			"server; without it, backup prints the command to run).\n\n" +
			"The snapshot is written beside FILE and renamed into place once checked, so FILE is never\n" +
			"half-written. Restore it with `teammem-server restore FILE`.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBackup(cmd.Context(), r, args[0], force)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE if it exists")
	return cmd
}

// restoreCmd is `teammem-server restore FILE`.
func restoreCmd(r *storeRunner) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the configured database with a backup, then check it",
		Long: "restore replaces the configured database with FILE, a backup `teammem-server backup` wrote, and\n" +
			"checks the result as fsck does. Stop the server (every replica) first: restore refuses a database\n" +
			"another process has open. It refuses a database that holds any org unless --force.\n\n" +
			"SQLite: the file is copied beside the database and renamed into place.\n" +
			"Postgres: pg_restore in one transaction (pg_restore must be on PATH), so a failed restore\n" +
			"changes nothing.\n\n" +
			"A backup from an older version is migrated; one from a newer version is refused. Clients that\n" +
			"synced after the backup notice the restore on their next sync and upload what it lacks.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRestore(cmd.Context(), r, args[0], force)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "replace a database that already holds orgs")
	return cmd
}

func runBackup(ctx context.Context, r *storeRunner, file string, force bool) error {
	if fi, err := os.Stat(file); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory: name the backup file", file)
		}
		if !force {
			return fmt.Errorf("%s exists: --force replaces it", file)
		}
	}
	dir := filepath.Dir(file)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("cannot write %s: directory %s does not exist", file, dir)
	}
	driver, target, err := store.Parse(r.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("TEAMMEM_DATABASE_URL: %w", err)
	}
	if driver == "sqlite" {
		if _, err := os.Stat(target); errors.Is(err, os.ErrNotExist) {
			abs, _ := filepath.Abs(target)
			fmt.Fprintf(r.stderr, "database: %s (%s)\n", store.Redact(r.cfg.DatabaseURL), abs)
			return fmt.Errorf("there is no database at %s to back up: run where the server runs, or name its database with TEAMMEM_DATABASE_URL (--database-url)", abs)
		}
	}
	var dump *exec.Cmd
	if driver == "postgres" {
		// Before anything else: without pg_dump there is nothing to run.
		if dump, err = pgTool(ctx, "pg_dump", r.cfg.DatabaseURL, "--format=custom", "--no-owner", "--no-privileges"); err != nil {
			return fmt.Errorf("%w\nrun instead: pg_dump --format=custom --no-owner --no-privileges --file=%s \"$TEAMMEM_DATABASE_URL\"", err, shellQuote(file))
		}
		fmt.Fprintf(r.stderr, "database: %s\n", store.Redact(r.cfg.DatabaseURL))
	}
	// A backup changes nothing: a database another version's server runs
	// is refused rather than migrated by opening it here.
	if err := sameSchema(ctx, driver, target, r.cfg.DatabaseURL); err != nil {
		return err
	}
	start := time.Now()
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.%d.tmp", filepath.Base(file), os.Getpid()))
	_ = os.Remove(tmp)
	defer os.Remove(tmp)
	fmt.Fprintf(r.stderr, "backing up to %s...\n", file)
	if driver == "sqlite" {
		st, err := openStore(ctx, r.cfg, false, r.stderr)
		if err != nil {
			return err
		}
		defer st.Close()
		if err := st.(*sqlite.DB).BackupInto(ctx, tmp); err != nil {
			return err
		}
		if err := sqlite.QuickCheck(ctx, tmp); err != nil {
			return fmt.Errorf("the snapshot does not check out, nothing written: %w", err)
		}
	} else {
		// pg_dump's own snapshot is the backup: the store is not opened.
		dump.Args = append(dump.Args, "--file="+tmp)
		if err := runTool(dump); err != nil {
			return err
		}
		list, err := pgTool(ctx, "pg_restore", "", "--list", tmp)
		if err == nil {
			err = runTool(list)
		}
		if err != nil {
			return fmt.Errorf("the archive pg_dump wrote does not list, nothing written: %w", err)
		}
	}
	// A backup holds what the database does: key hashes, content, audit.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("put the backup in place: %w", err)
	}
	if err := syncFile(dir); err != nil {
		return err
	}
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.stdout, "backed up to %s: %s in %.1f s\n", file, byteSize(fi.Size()), time.Since(start).Seconds())
	return nil
}

// sameSchema refuses a database whose schema is not this binary's: opening
// an older one would migrate it, a newer one would fail.
func sameSchema(ctx context.Context, driver, target, dsn string) error {
	var v int64
	var err error
	if driver == "sqlite" {
		v, _, err = sqlite.Inspect(ctx, target, true)
	} else {
		var t postgres.Target
		t, err = postgres.Inspect(ctx, dsn)
		v = t.Version
		if err == nil && v == 0 {
			err = fmt.Errorf("the database holds no teammem schema")
		}
	}
	if err != nil {
		return err
	}
	if latest := migrations.Latest(); v != latest {
		return fmt.Errorf("the database is at schema version %d, this teammem-server's is %d: back up with the binary the server runs (opening the database here would migrate it)", v, latest)
	}
	return nil
}

func runRestore(ctx context.Context, r *storeRunner, file string, force bool) error {
	if fi, err := os.Stat(file); err != nil {
		return fmt.Errorf("no backup at %s: %w", file, err)
	} else if fi.IsDir() {
		return fmt.Errorf("%s is a directory: name the backup file", file)
	}
	driver, target, err := store.Parse(r.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("TEAMMEM_DATABASE_URL: %w", err)
	}
	latest := migrations.Latest()
	newer := func(v int64) error {
		return fmt.Errorf("%s is at schema version %d, newer than this teammem-server's %d: restore it with the version that wrote it", file, v, latest)
	}
	start := time.Now()
	if driver == "sqlite" {
		v, _, err := sqlite.Inspect(ctx, file, false)
		if err != nil {
			return err
		}
		if v > latest {
			return newer(v)
		}
		if err := restoreSQLite(ctx, r, file, target, force); err != nil {
			return err
		}
	} else {
		v, err := dumpVersion(ctx, file)
		if err != nil {
			return err
		}
		if v > latest {
			return newer(v)
		}
		t, err := postgres.Inspect(ctx, r.cfg.DatabaseURL)
		if err != nil {
			return err
		}
		if t.Others > 0 {
			return fmt.Errorf("%d other sessions are connected to the database: stop the server (every replica) before a restore", t.Others)
		}
		if t.Tables > 0 && (t.Orgs || t.Version == 0) && !force {
			what := "orgs"
			if t.Version == 0 {
				what = fmt.Sprintf("%d tables that are not teammem's", t.Tables)
			}
			return fmt.Errorf("the database holds %s: --force replaces it", what)
		}
		fmt.Fprintf(r.stderr, "restoring %s into %s...\n", file, store.Redact(r.cfg.DatabaseURL))
		res, err := pgTool(ctx, "pg_restore", r.cfg.DatabaseURL, "--clean", "--if-exists", "--no-owner", "--no-privileges",
			"--single-transaction", "--exit-on-error", file)
		if err != nil {
			return err
		}
		if err := runTool(res); err != nil {
			return fmt.Errorf("%w (the transaction rolled back: the database is as it was)", err)
		}
	}
	st, err := openStore(ctx, r.cfg, true, r.stderr)
	if err != nil {
		return fmt.Errorf("open the restored database: %w", err)
	}
	defer st.Close()
	rep, err := teammem.Fsck(ctx, st)
	if err != nil {
		return fmt.Errorf("check the restored database: %w", err)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(r.stdout, "space %d (org %d): %s\n", p.SpaceID, p.OrgID, p.Message)
	}
	if len(rep.Problems) > 0 {
		return fmt.Errorf("restored, but fsck found %d problems", len(rep.Problems))
	}
	fmt.Fprintf(r.stdout, "restored %s in %.1f s: %d spaces and %d entries, fsck clean\n", file, time.Since(start).Seconds(), rep.Spaces, rep.Entries)
	return nil
}

// restoreSQLite puts a copy of file where the database target is, after
// checking that no process has target open and that it may be replaced.
func restoreSQLite(ctx context.Context, r *storeRunner, file, target string, force bool) error {
	inUse, err := sqlite.InUse(ctx, target)
	if err != nil {
		return err
	}
	if inUse {
		return fmt.Errorf("%s is open in another process: stop the server before a restore", target)
	}
	if fi, err := os.Stat(target); err == nil && fi.Size() > 0 && !force {
		_, orgs, err := sqlite.Inspect(ctx, target, false) // InUse found nobody holding it
		if err != nil {
			return fmt.Errorf("%s exists and is not an empty teammem database: --force replaces it", target)
		}
		if orgs {
			return fmt.Errorf("%s holds orgs: --force replaces it", target)
		}
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create database directory: %w", err)
	}
	fmt.Fprintf(r.stderr, "restoring %s into %s...\n", file, target)
	tmp := filepath.Join(dir, fmt.Sprintf(".%s.%d.tmp", filepath.Base(target), os.Getpid()))
	defer os.Remove(tmp)
	if err := copyFile(file, tmp); err != nil {
		return err
	}
	// InUse folded the old database's WAL in; its companions would
	// otherwise be read as the new file's.
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(target + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	if err := os.Rename(tmp, target); err != nil {
		return fmt.Errorf("put the database in place: %w", err)
	}
	return syncFile(dir)
}

// dumpVersion reads the schema version a pg_dump archive holds, which
// also tells a teammem archive from any other file.
func dumpVersion(ctx context.Context, file string) (int64, error) {
	c, err := pgTool(ctx, "pg_restore", "", "--data-only", "--table=schema_migrations", "--file=-", file)
	if err != nil {
		return 0, err
	}
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	if err := c.Run(); err != nil {
		return 0, fmt.Errorf("%s is not a pg_dump archive in custom format: %s", file, firstLine(errOut.String(), err))
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "COPY ") && strings.Contains(sc.Text(), "schema_migrations") && sc.Scan() {
			num, _, _ := strings.Cut(sc.Text(), "\t")
			if v, err := strconv.ParseInt(num, 10, 64); err == nil {
				return v, nil
			}
		}
	}
	return 0, fmt.Errorf("%s is not a teammem backup: it holds no schema version", file)
}

// pgTool is the command for a PostgreSQL client tool, connected to dsn
// when it is set. The password travels in the environment, not on the
// command line where other users' ps would show it, and the pool settings
// only pgx knows are dropped.
func pgTool(ctx context.Context, name, dsn string, args ...string) (*exec.Cmd, error) {
	bin, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("%s is not on PATH (install the PostgreSQL client tools, as new as the server)", name)
	}
	c := exec.CommandContext(ctx, bin, args...)
	c.Env = os.Environ()
	if dsn != "" {
		u, err := url.Parse(dsn)
		if err != nil {
			return nil, fmt.Errorf("TEAMMEM_DATABASE_URL: %s", "invalid URL")
		}
		if p, ok := u.User.Password(); ok {
			c.Env = append(c.Env, "PGPASSWORD="+p)
			u.User = url.User(u.User.Username())
		}
		q := u.Query()
		for k := range q {
			if strings.HasPrefix(k, "pool_") {
				q.Del(k)
			}
		}
		u.RawQuery = q.Encode()
		c.Args = append(c.Args, "--dbname="+u.String())
	}
	return c, nil
}

// runTool runs c, its error carrying the first line the tool wrote.
func runTool(c *exec.Cmd) error {
	var errOut bytes.Buffer
	c.Stdout, c.Stderr = io.Discard, &errOut
	if err := c.Run(); err != nil {
		return fmt.Errorf("%s: %s", filepath.Base(c.Path), firstLine(errOut.String(), err))
	}
	return nil
}

func firstLine(s string, err error) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if s == "" {
		return err.Error()
	}
	return s
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", from, err)
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// syncFile flushes a file or a directory (a rename in it) to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
