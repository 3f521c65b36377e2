package dream

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/teammem/teammem/internal/client/transcript"
)

var updateGolden = flag.Bool("update", false, "rewrite the prompt golden files")

// TestDreamPromptGolden pins the client's prompt byte for byte: the engine
// moved to internal/consolidate, and the client's text must not change with it.
func TestDreamPromptGolden(t *testing.T) {
	// The prompt prints local times; pin the zone (serial test: nothing else runs).
	old := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = old })
	now := time.Date(2026, 3, 6, 14, 30, 0, 0, time.UTC)
	sessions := make([]transcript.SessionFile, 52)
	for i := range sessions {
		sessions[i] = transcript.SessionFile{ID: "sess-" + string(rune('a'+i%26)), ModTime: now.Add(-time.Duration(i) * time.Hour)}
	}
	cases := []struct {
		name string
		in   PromptInput
	}{
		{"first", PromptInput{MemoryDir: "/home/u/.claude/projects/p/memory", Now: now}},
		{"full", PromptInput{MemoryDir: "/home/u/.claude/projects/p/memory", TranscriptDir: "/home/u/.claude/projects/p",
			Now: now, LastConsolidated: now.Add(-36 * time.Hour), Sessions: sessions,
			Logs: []string{"logs/2026/03/2026-03-06.md", "logs/2026/03/2026-03-05.md"}, MaxTurns: 12}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			golden(t, "prompt_"+c.name+".golden", BuildPrompt(c.in))
		})
	}
	golden(t, "system.golden", SystemPrompt)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}
