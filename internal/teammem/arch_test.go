package teammem

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportsStayPure enforces that the domain package imports only the
// standard library, yaml and golang.org/x/text: no database, HTTP framework
// or scanner.
func TestImportsStayPure(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue // tests may drive the domain through real drivers
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			first := strings.Split(p, "/")[0]
			allowed := !strings.Contains(first, ".") || p == "gopkg.in/yaml.v3" || strings.HasPrefix(p, "golang.org/x/text/")
			for _, bad := range []string{"net/http", "database/sql"} {
				if p == bad {
					allowed = false
				}
			}
			if !allowed {
				t.Errorf("%s imports %s; internal/teammem must stay free of infrastructure", f, p)
			}
		}
	}
}

// TestNoDriverLinked enforces that the domain and the HTTP API reach the
// database only through teammem.Store: neither may link a storage driver,
// directly or through any package it imports. What a driver can do beyond
// the Store (carry events between replicas, for one) it declares as an
// interface the driver implements, which the binary's wiring asks for. The
// listing is go list's, so a new import path to a driver fails here however
// deep it hides; test files are not listed, since tests may use real drivers.
func TestNoDriverLinked(t *testing.T) {
	const mod = "github.com/teammem/teammem/"
	for _, pkg := range []string{mod + "internal/teammem", mod + "internal/server/httpapi"} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if isDriver(dep) {
				t.Errorf("%s links %s; a driver belongs behind teammem.Store, wired in by the binary", pkg, dep)
			}
		}
	}
}

// isDriver reports whether an import path is storage code: teammem's own
// drivers and their opener, and the Postgres and SQLite libraries.
// database/sql is not one: it is only interfaces, and the Prometheus
// collectors link it for their database statistics collector.
func isDriver(path string) bool {
	for _, prefix := range []string{"github.com/teammem/teammem/internal/server/store", "github.com/jackc/", "modernc.org/"} {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return strings.Contains(path, "sqlite") || strings.Contains(path, "pgx") || strings.HasPrefix(path, "github.com/lib/pq")
}
