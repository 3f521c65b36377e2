package layout_test

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The repository's packages are grouped by side (README "Layout"). These
// tests keep the README's package table true and the sides apart.

const module = "github.com/teammem/teammem"

// packages returns every directory holding Go files, relative to the
// module root, with the module's imports of its non-test files.
func packages(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if _, ok := pkgs[dir]; !ok {
			pkgs[dir] = nil
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if rest, ok := strings.CutPrefix(p, module+"/"); ok {
				pkgs[dir] = append(pkgs[dir], rest)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	delete(pkgs, ".") // this test
	return pkgs
}

// readmeTable returns the README's Layout table: package → side.
func readmeTable(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open("README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := map[string]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Layout"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 3 {
			t.Errorf("README Layout row %q: want | package | side | what |", line)
			continue
		}
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if _, dup := rows[pkg]; dup {
			t.Errorf("README Layout lists %s twice", pkg)
		}
		rows[pkg] = strings.TrimSpace(cells[1])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal(`README has no "## Layout" package table`)
	}
	return rows
}

// side is the side a package's path puts it on.
func side(pkg string) string {
	switch {
	case pkg == "cmd/server" || strings.HasPrefix(pkg, "internal/server/") || pkg == "migrations":
		return "server"
	case pkg == "cmd/client" || strings.HasPrefix(pkg, "internal/client/"):
		return "client"
	case strings.HasPrefix(pkg, "internal/testing/"):
		return "tests"
	case pkg == "cmd/bench" || strings.HasPrefix(pkg, "scripts/"):
		return "tools"
	}
	return "shared"
}

// TestReadmeListsEveryPackage: every package is in the README's table,
// once, under the side its path puts it on, and every row is a package.
func TestReadmeListsEveryPackage(t *testing.T) {
	pkgs := packages(t)
	rows := readmeTable(t)
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range pkgs {
			if !yield(p) {
				return
			}
		}
	}) {
		s, ok := rows[p]
		switch {
		case !ok:
			t.Errorf("README Layout does not list %s (side %s)", p, side(p))
		case s != side(p):
			t.Errorf("README Layout puts %s on side %q; its path says %q", p, s, side(p))
		}
	}
	for p := range rows {
		if _, ok := pkgs[p]; !ok {
			t.Errorf("README Layout lists %s, which holds no Go package", p)
		}
	}
}

// TestSidesStayApart: the server links no client package and the client
// no server package; shared packages link only shared ones; test support
// is linked only by tests, other test support and the bench.
func TestSidesStayApart(t *testing.T) {
	for pkg, imports := range packages(t) {
		from := side(pkg)
		for _, im := range imports {
			to := side(im)
			var bad bool
			switch from {
			case "server":
				bad = to == "client" || to == "tests"
			case "client":
				bad = to == "server" || to == "tests"
			case "shared":
				bad = to != "shared"
			}
			if bad {
				t.Errorf("%s (%s) imports %s (%s)", pkg, from, im, to)
			}
		}
	}
}
