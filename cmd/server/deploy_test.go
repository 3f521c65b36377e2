package main

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDockerfileDataDirOwned checks the image's SQLite directory: it is the
// directory of the image's TEAMMEM_DATABASE_URL, copied in owned by the
// user the server runs as, so that the server can create its database there.
func TestDockerfileDataDirOwned(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stages := strings.Split(string(b), "\nFROM ")
	final := stages[len(stages)-1]
	dsn := regexp.MustCompile(`TEAMMEM_DATABASE_URL=sqlite://(/\S+)`).FindStringSubmatch(final)
	user := regexp.MustCompile(`(?m)^USER (\S+)`).FindStringSubmatch(final)
	if dsn == nil || user == nil {
		t.Fatalf("the final stage sets no SQLite TEAMMEM_DATABASE_URL or no USER:\n%s", final)
	}
	dir := path.Dir(dsn[1])
	owned := regexp.MustCompile(`(?m)^COPY --from=\S+ --chown=(\S+) \S+ ` + regexp.QuoteMeta(dir) + `/?$`).FindStringSubmatch(final)
	if owned == nil {
		t.Fatalf("the final stage does not copy %s in with --chown (WORKDIR alone makes it root's)", dir)
	}
	if owned[1] != user[1] {
		t.Errorf("%s is owned by %s, the server runs as %s", dir, owned[1], user[1])
	}
}

// TestDockerignore checks what the build context leaves out: a local
// database and built binaries stay out of the image, the sources go in.
func TestDockerignore(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, strings.Trim(line, "/"))
		}
	}
	// ignored reports whether p or a directory above it matches a pattern,
	// as Docker reads them: from the context's root, ** for any directories.
	ignored := func(p string) bool {
		for q := p; q != "."; q = path.Dir(q) {
			for _, pat := range patterns {
				if ok, _ := path.Match(pat, q); ok {
					return true
				}
				if rest, deep := strings.CutPrefix(pat, "**/"); deep {
					if ok, _ := path.Match(rest, path.Base(q)); ok {
						return true
					}
				}
			}
		}
		return false
	}
	for _, p := range []string{"data/teammem.db", "data/teammem.db-wal", "cmd/server/teammem.db", "teammem-server", "teammem",
		"cmd/server/server.test", "cpu.prof", ".git/config"} {
		if !ignored(p) {
			t.Errorf(".dockerignore lets %s into the build context", p)
		}
	}
	for _, p := range []string{"go.mod", "go.sum", "cmd/server/main.go", "cmd/client/main.go", "internal/teammem/errors.go",
		"migrations/sqlite/0001_init.sql", "api/openapi.yaml", "deploy/Dockerfile"} {
		if ignored(p) {
			t.Errorf(".dockerignore leaves %s out of the build", p)
		}
	}
}
