package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServerDoesNotLinkModelSDKs keeps the model SDKs in the client only.
func TestServerDoesNotLinkModelSDKs(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/anthropics/", "github.com/openai/", "github.com/teammem/teammem/internal/llm", "github.com/teammem/teammem/internal/client/jobs/agent"} {
			if strings.HasPrefix(dep, banned) {
				t.Errorf("teammem-server links %s", dep)
			}
		}
	}
}
