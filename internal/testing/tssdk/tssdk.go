// Package tssdk runs the official TypeScript SDK (@anthropic-ai/sdk, the
// package directory named by TEAMMEM_TS_SDK) in conformance scripts under
// node, and compares what the scripts observed with what they wanted.
//
// A script prints one JSON object on stdout, {"checks":[{name, got, want}]},
// and decides nothing itself; the Go test asserts every check. Scripts
// share checks.mjs (check, client, caught, refusal, report), which Run
// names in TEAMMEM_TS_CHECKS.
package tssdk

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/teammem/teammem/internal/testing/fixtures"
)

// Check is one observation of a script: what the SDK saw and what the
// script wants.
type Check struct {
	Name string `json:"name"`
	Got  any    `json:"got"`
	Want any    `json:"want"`
}

// SDK is the installed SDK and the node that runs it.
type SDK struct {
	Dir  string // the SDK's package directory
	Node string // the node binary
}

// Find finds the SDK and node. Without TEAMMEM_TS_SDK it skips the test,
// or fails it under CI, where scripts/test installs the SDK and sets it.
func Find(tb testing.TB) SDK {
	tb.Helper()
	dir := os.Getenv("TEAMMEM_TS_SDK")
	if dir == "" {
		if ciRun() {
			tb.Fatal("TEAMMEM_TS_SDK is not set under CI; scripts/test installs @anthropic-ai/sdk 1.15.0 and sets it")
		}
		tb.Skip("TypeScript SDK not installed: run scripts/test, which installs @anthropic-ai/sdk 1.15.0 and sets TEAMMEM_TS_SDK")
	}
	if _, err := os.Stat(filepath.Join(dir, "index.mjs")); err != nil {
		tb.Fatalf("TEAMMEM_TS_SDK=%s is not the SDK's package directory: %v", dir, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		tb.Fatalf("TEAMMEM_TS_SDK is set but node is not on PATH: %v", err)
	}
	return SDK{Dir: dir, Node: node}
}

// Run runs script (a path) with args and env added to the test's
// environment, and decodes the checks it prints; a script that fails,
// prints no JSON or makes no check fails the test.
func (s SDK) Run(tb testing.TB, script string, args []string, env ...string) []Check {
	tb.Helper()
	ctx := tb.Context()
	cmd := exec.CommandContext(ctx, s.Node, append([]string{script}, args...)...)
	cmd.Env = append(append(os.Environ(), "TEAMMEM_TS_SDK="+s.Dir, "TEAMMEM_TS_CHECKS="+checksScript(tb)), env...)
	// The SDK reads these; none may send a test's traffic elsewhere.
	cmd.Env = append(cmd.Env, "ANTHROPIC_BASE_URL=", "ANTHROPIC_API_KEY=", "ANTHROPIC_AUTH_TOKEN=", "HTTP_PROXY=", "HTTPS_PROXY=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("node %s: %v\n%s", script, err, stderr.Bytes())
	}
	var res struct {
		Checks []Check `json:"checks"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		tb.Fatalf("%s printed no JSON: %v\n%s\n%s", script, err, out, stderr.Bytes())
	}
	if len(res.Checks) == 0 {
		tb.Fatalf("%s made no checks\n%s", script, stderr.Bytes())
	}
	return res.Checks
}

// Assert reports every check whose observation differs from its want.
func Assert(tb testing.TB, checks []Check) {
	tb.Helper()
	for _, c := range checks {
		if !reflect.DeepEqual(c.Got, c.Want) {
			tb.Errorf("%s: got %s, want %s", c.Name, jsonText(c.Got), jsonText(c.Want))
		}
	}
}

// checksScript is the path of checks.mjs, the helpers every script
// imports, found from the module root (tests run in their package's
// directory), so that it holds under -trimpath too.
func checksScript(tb testing.TB) string {
	tb.Helper()
	root, err := fixtures.ModuleRoot(".")
	if err != nil {
		tb.Fatal(err)
	}
	return filepath.Join(root, "internal", "testing", "tssdk", "checks.mjs")
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// ciRun reports whether the tests run under CI (CI set to a true value),
// where a missing SDK fails instead of skipping.
func ciRun() bool {
	switch os.Getenv("CI") {
	case "", "0", "f", "F", "false", "FALSE", "False":
		return false
	}
	return true
}
