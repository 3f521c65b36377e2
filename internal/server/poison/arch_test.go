package poison

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportsStayPure: the heuristics are domain code, importing only the
// standard library (net/url for parsing, never net/http or a database),
// teammem and the pure string matcher ahocorasick.
func TestImportsStayPure(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		ast, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			std := !strings.Contains(strings.Split(p, "/")[0], ".")
			if (!std && p != "github.com/teammem/teammem/internal/teammem" && p != "github.com/teammem/teammem/internal/ahocorasick" && p != "golang.org/x/text/unicode/norm") || p == "net/http" || p == "database/sql" {
				t.Errorf("%s imports %s; internal/server/poison must stay free of infrastructure", f, p)
			}
		}
	}
}
