package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestModelSDKsOnlyInTheDreamWorker keeps the model SDKs (and
// internal/llm) out of the server's HTTP layer and domain: on the server
// side only internal/server/dreamworker, which cmd/server wires, may link
// them (issue 24). The client's agent never reaches the server at all.
func TestModelSDKsOnlyInTheDreamWorker(t *testing.T) {
	banned := []string{"github.com/anthropics/", "github.com/openai/", "github.com/teammem/teammem/internal/llm"}
	for _, pkg := range []string{"../../internal/server/httpapi", "../../internal/teammem"} {
		for _, dep := range deps(t, pkg) {
			for _, b := range banned {
				if strings.HasPrefix(dep, b) {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
	linked := false
	for _, dep := range deps(t, ".") {
		if strings.HasPrefix(dep, "github.com/teammem/teammem/internal/client/") {
			t.Errorf("teammem-server links %s", dep)
		}
		linked = linked || dep == "github.com/teammem/teammem/internal/llm"
	}
	if !linked {
		t.Error("teammem-server does not link internal/llm: the dream worker is not wired")
	}
}

// deps lists the packages pkg links (tests left out).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))
}
