package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/wire"
)

// TestSearchCommand runs `teammem search` against a real server: the
// memory pushed from one machine is found from another, in this repo or
// every repo, as text and as JSON, and bad input is refused with a clear
// error before anything is asked.
func TestSearchCommand(t *testing.T) {
	t.Parallel()
	url := startServer(t)
	a := newMachine(t, url, "git@github.com:acme/widgets.git")
	dir := a.memDir()
	a.write(dir, "team/deploy.md", "# Deploy\n\nWe deploy to staging first, then production.\n")
	a.write(dir, "notes.md", "My own deploy checklist.\n")
	a.must("push")
	other := newMachine(t, url, "git@github.com:acme/gadgets.git")
	other.write(other.memDir(), "team/release.md", "Gadgets deploy weekly.\n")
	other.must("push")

	out := a.must("search", "deploy")
	contains(t, out, "acme/widgets  team/deploy.md")
	contains(t, out, "We [[deploy]] to staging")
	contains(t, out, "acme/widgets  notes.md")
	if strings.Contains(out, "gadgets") {
		t.Fatalf("search of this repo found another's:\n%s", out)
	}
	contains(t, a.must("search", "--all-repos", "deploy", "weekly"), "acme/gadgets  team/release.md")

	var page wire.SearchPage
	if err := json.Unmarshal([]byte(a.must("search", "--json", "--scope", "team", "--limit", "1", "stag*")), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].Path != "deploy.md" || page.Data[0].Scope != "team" || page.NextPage != nil {
		t.Fatalf("--json page = %+v", page)
	}
	if _, errOut, code := a.run("search", "nothingmatches"); code != 0 || !strings.Contains(errOut, `no memory matches "nothingmatches"`) {
		t.Fatalf("no hits: exit %d, %s", code, errOut)
	}
	for args, want := range map[string]string{
		"search":                "give the words to search for",
		"search --scope both x": "--scope \"both\": want team, personal or all",
		"search --limit 0 x":    "--limit 0: want 1 to 100",
		"search !!!":            "no word to search for",
		"search --page bogus x": "not a cursor",
		"search --repo nope x":  "--repo",
	} {
		_, errOut, code := a.run(strings.Fields(args)...)
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("teammem %s: exit %d, %q, want an error with %q", args, code, errOut, want)
		}
	}
}
