package dreamworker_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/teammem/teammem/internal/consolidate"
	"github.com/teammem/teammem/internal/llm"
	"github.com/teammem/teammem/internal/teammem"
	"github.com/teammem/teammem/internal/testing/llmtest"
)

// before is the small store of the scripted consolidation: two duplicate
// memories, a fact a later memory contradicts, and an index.
var before = map[string]string{
	"MEMORY.md":         "- [Deploy](team/deploy.md) — how to deploy\n- [Deploying](team/deploying.md) — deploying\n- [Database](team/db.md) — the database\n- [Migration](team/migration.md) — the migration\n",
	"team/deploy.md":    "Deploy with `make deploy` from main.\n",
	"team/deploying.md": "To deploy, run make deploy (only from the main branch).\n",
	"team/db.md":        "The database is MySQL 5.7.\n",
	"team/migration.md": "In March we moved the database from MySQL to Postgres 15.\n",
}

// after is what the script leaves.
var after = map[string]string{
	"MEMORY.md":         "- [Deploy](team/deploy.md) — `make deploy`, from main only\n- [Database](team/db.md) — Postgres 15 since March\n- [Migration](team/migration.md) — MySQL to Postgres, March\n",
	"team/deploy.md":    "Deploy with `make deploy`, only from the main branch.\n",
	"team/db.md":        "The database is Postgres 15 (moved from MySQL 5.7 in March).\n",
	"team/migration.md": before["team/migration.md"],
}

// turn is a scripted reply that spends usage.
func turn(r llmtest.Reply) llmtest.Reply {
	r.Response.Usage = llm.Usage{InputTokens: 120, OutputTokens: 30, CacheReadTokens: 400, CacheCreationTokens: 10}
	return r
}

// consolidation is the script of the scripted consolidation.
func consolidation() []llmtest.Reply {
	return []llmtest.Reply{
		turn(llmtest.ToolUse("t1", "list", map[string]string{"path": "/"})),
		turn(llmtest.ToolUse("t2", "read", map[string]string{"path": "/team/deploying.md"})),
		turn(llmtest.ToolUse("t3", "write", map[string]string{"path": "/team/deploy.md", "content": after["team/deploy.md"]})),
		turn(llmtest.ToolUse("t4", "delete", map[string]string{"path": "/team/deploying.md"})),
		turn(llmtest.ToolUse("t5", "write", map[string]string{"path": "/team/db.md", "content": after["team/db.md"]})),
		turn(llmtest.ToolUse("t6", "write", map[string]string{"path": "/MEMORY.md", "content": after["MEMORY.md"]})),
		turn(llmtest.Text("Merged the deploy duplicates, corrected the database fact, rewrote the index.")),
	}
}

// TestConsolidation runs the scripted consolidation through the job queue
// to completed, on both drivers and both output behaviours: the output
// holds the consolidated memories, a create_new input is untouched, and
// the usage is the sum of the model's answers.
func TestConsolidation(t *testing.T) {
	forDrivers(t, func(t *testing.T, st teammem.Store) {
		script := llmtest.NewScript(consolidation()...)
		b := setup(t, st, script, nil)
		input := b.inputStore(before)
		d := b.waitReleased(b.dream(input, teammem.DreamCreateNew).ID)
		if d.Status != teammem.DreamCompleted || d.ErrorType != "" || d.Review.State != teammem.ReviewPending {
			t.Fatalf("dream %s %s %s, review %s", d.Status, d.ErrorType, d.ErrorMessage, d.Review.State)
		}
		want := teammem.DreamUsage{InputTokens: 7 * 120, OutputTokens: 7 * 30, CacheReadInputTokens: 7 * 400, CacheCreationInputTokens: 7 * 10}
		if d.Usage != want {
			t.Fatalf("usage %+v, want %+v", d.Usage, want)
		}
		if d.OutputSpaceID == 0 || d.OutputSpaceID == input.Space.ID || len(d.Base) != len(before) {
			t.Fatalf("output %d, base %v", d.OutputSpaceID, d.Base)
		}
		if got := b.files(d.OutputSpaceID); !maps.Equal(got, after) {
			t.Fatalf("output %v", got)
		}
		if got := b.files(input.Space.ID); !maps.Equal(got, before) {
			t.Fatalf("input changed: %v", got)
		}
		out, err := st.MemoryStoreGet(t.Context(), b.org.ID, d.OutputStoreUID)
		if err != nil || out.Name != "notes (dream "+d.ID+")" {
			t.Fatalf("output store %q: %v", out.Name, err)
		}
		if r := script.Requests()[0]; r.System != consolidate.StoreSystem || !strings.Contains(r.Messages[0].Content[0].Text, "Memory store: notes") {
			t.Fatalf("not the store prompt: %.300s", r.Messages[0].Content[0].Text)
		}

		// update_existing writes into the input itself.
		script.Add(consolidation()...)
		u := b.waitReleased(b.dream(input, teammem.DreamUpdateExisting).ID)
		if u.Status != teammem.DreamCompleted || u.OutputSpaceID != input.Space.ID || u.Review.State != teammem.ReviewNone {
			t.Fatalf("update_existing %s %s %s, output %d, review %s", u.Status, u.ErrorType, u.ErrorMessage, u.OutputSpaceID, u.Review.State)
		}
		if got := b.files(input.Space.ID); !maps.Equal(got, after) {
			t.Fatalf("input after update_existing: %v", got)
		}
	})
}
