package teammem

import (
	"go/parser"
	"go/token"
	"os"
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
