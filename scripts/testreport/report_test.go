package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSkipReason(t *testing.T) {
	for _, tt := range []struct {
		name   string
		output []string
		want   string
	}{
		{"skip message", []string{"=== RUN   TestA\n", "    a_test.go:9: no database\n", "--- SKIP: TestA (0.00s)\n"}, "no database"},
		{"log then skip", []string{"    a_test.go:8: looked in /x\n", "    a_test.go:9: real-world fixtures not found; set TEAMMEM_FIXTURES\n",
			"--- SKIP: TestA (0.00s)\n"}, "real-world fixtures not found; set TEAMMEM_FIXTURES"},
		{"multi-line message keeps its first line", []string{"    a_test.go:9: first\n", "        second\n", "--- SKIP: TestA (0.00s)\n"}, "first"},
		{"subtest", []string{"=== RUN   TestA/b\n", "    a_test.go:3: sub reason\n", "--- SKIP: TestA/b (0.00s)\n"}, "sub reason"},
		{"SkipNow", []string{"=== RUN   TestA\n", "--- SKIP: TestA (0.00s)\n"}, NoReason},
		{"nothing", nil, NoReason},
	} {
		if got := SkipReason(tt.output); got != tt.want {
			t.Errorf("%s: SkipReason = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestRealGoTest runs go test -json on a small module of passing, failing and skipping
// tests and a package that does not build, and checks what testreport makes of it: the
// stream of this Go version, not a recording of an older one.
func TestRealGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds and runs a test module with go test")
	}
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.24\n")
	write("a/a_test.go", `package a

import "testing"

func TestPass(t *testing.T) {}

func TestSkipParallel(t *testing.T) {
	t.Parallel()
	t.Log("looked everywhere")
	t.Skip("fixtures absent")
}

func TestSkipNow(t *testing.T) { t.SkipNow() }

func TestSubtests(t *testing.T) {
	t.Run("skips", func(t *testing.T) { t.Skipf("fixtures %s", "absent") })
	t.Run("fails", func(t *testing.T) { t.Error("boom\nsecond line") })
	t.Run("passes", func(t *testing.T) {})
}
`)
	write("b/b_test.go", "package b\n\nimport \"testing\"\n\nfunc TestOK(t *testing.T) {}\n")
	write("c/c.go", "package c\n\nfunc f() { undefined() }\n")
	write("c/c_test.go", "package c\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) {}\n")
	write("d/d.go", "package d\n")

	cmd := exec.Command("go", "test", "-json", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local")
	raw, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("go test passed:\n%s", raw)
	}
	var out strings.Builder
	r := NewReport(&out, "example.com/m/")
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		r.Line(line)
	}

	// TestPass, TestSubtests/passes, b.TestOK; TestSubtests/fails and its parent; three skips.
	if r.Passed != 3 || r.FailedN != 2 || r.Skipped != 3 || r.Packages["ok"] != 1 || r.Packages["fail"] != 2 ||
		r.Packages["broken"] != 1 || r.Packages["skip"] != 1 {
		t.Errorf("passed %d failed %d skipped %d packages %v\n%s", r.Passed, r.FailedN, r.Skipped, r.Packages, raw)
	}
	var sum strings.Builder
	r.WriteSummary(&sum)
	for _, want := range []string{
		"tests: 3 passed, 2 failed, 3 skipped\n",
		"packages: 1 passed, 2 failed, 1 without tests\n",
		"2 skipped: fixtures absent\n    a TestSkipParallel, a TestSubtests/skips\n",
		"1 skipped: " + NoReason + "\n    a TestSkipNow\n",
		"failed: a TestSubtests, a TestSubtests/fails\n",
	} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
	// What plain go test shows: the failure in full, the verdict lines, the build error;
	// nothing of the passing and skipping tests, no -v progress lines.
	shown := out.String()
	for _, want := range []string{"boom\n", "        second line\n", "--- FAIL: TestSubtests/fails", "--- FAIL: TestSubtests (",
		"FAIL\texample.com/m/a", "ok  \texample.com/m/b", "undefined: undefined", "FAIL\texample.com/m/c [build failed]",
		"example.com/m/d\t[no test files]"} {
		if !strings.Contains(shown, want) {
			t.Errorf("output lacks %q:\n%s", want, shown)
		}
	}
	for _, unwanted := range []string{"=== RUN", "looked everywhere", "--- SKIP", "--- PASS", "\nPASS\n"} {
		if strings.Contains(shown, unwanted) {
			t.Errorf("output holds %q:\n%s", unwanted, shown)
		}
	}
}
